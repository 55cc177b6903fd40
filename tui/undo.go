package tui

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
)

// uncompact is /uncompact: the latest compaction on the path is undone,
// and the model sees the whole history again. A reply being streamed is
// aborted first (its queued messages come back to the editor); a branch
// without a compaction is said before anything is stopped. The transcript
// is drawn again when the agent reports CompactionUndone.
func (m *Model) uncompact() tea.Cmd {
	if m.manual || m.compacting != "" || m.navigating {
		m.warn("A compaction or a navigation is running: wait for it (or press escape), then /uncompact")
		return nil
	}
	if _, err := m.ag.Receipt(""); err != nil {
		if errors.Is(err, agent.ErrNoCompaction) {
			m.warn("Nothing to undo: no compaction on this branch")
		} else {
			m.fail(err.Error())
		}
		return nil
	}
	if m.busy {
		m.takeQueue()
	}
	m.undoPins, m.undoing = m.ag.Pins(), true
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		_, err := ag.Uncompact(ctx, "")
		if err != nil {
			return func(m *Model) tea.Cmd {
				m.undoPins, m.undoing = nil, false
				m.fail(err.Error())
				return nil
			}
		}
		return nil
	})
}

// onUndone draws the conversation again from the leaf before the undone
// compaction, says so, and warns when entries were left on the side branch
// or when the whole history is past the compaction threshold (the next
// prompt then compacts again).
func (m *Model) onUndone(r *agent.UncompactResult) tea.Cmd {
	m.load(false)
	m.status(fmt.Sprintf("Compaction undone: the model sees the whole conversation again (%d messages, %s tokens)",
		len(r.Context.Messages), numfmt.Commas(r.Tokens)))
	if r.Left > 0 {
		m.warn(fmt.Sprintf("%d %s made after the compaction stay on its side branch, out of the conversation: /tree shows them",
			r.Left, plural(r.Left, "entry", "entries")))
	}
	if m.undoing {
		// What the undo did to the pins, against those before it.
		for _, text := range pinsRenewed(m.undoPins, m.ag.Pins()) {
			m.warn(text)
		}
		m.undoPins, m.undoing = nil, false
	}
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		b, err := ag.ContextBreakdown(ctx, agent.BreakdownRequest{})
		if err != nil || b.Threshold <= 0 || b.Estimate <= b.Threshold || !ag.State().AutoCompaction {
			return nil
		}
		return func(m *Model) tea.Cmd {
			m.warn(fmt.Sprintf("The whole history (%s tokens) is past the compaction threshold (%s): the next prompt compacts it again",
				numfmt.Commas(b.Estimate), numfmt.Commas(b.Threshold)))
			return nil
		}
	})
}

// plural picks the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
