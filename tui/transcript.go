package tui

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tui/markdown"
)

// item is one block of the transcript. Items render to strings for a
// width (they hold no terminal state), so the same item is drawn in the
// live area while it changes, printed once into the terminal's scrollback
// when it is finished, and drawn again when the whole transcript is
// repainted (a resize, Ctrl-O, Ctrl-T, another session).
type item interface {
	render(v *view) string
	// finished reports that the item will not change any more (it can go
	// to the scrollback).
	finished() bool
}

// view is what items render with.
type view struct {
	width        int
	expanded     bool // Ctrl-O: tool output, summaries and the header in full
	showThinking bool // Ctrl-T
	st           *styles
	md           *replies
	now          time.Time
	// frame counts the animation ticks (ten a second while the agent
	// works): a reply being streamed is rendered again at most once a
	// frame.
	frame int
}

// headerItem is the startup header: the version, the main keys and the
// context files the system prompt holds.
type headerItem struct {
	version      string
	contextFiles []string
	// ready is set once the agent has chosen its model and read the
	// context files: the header waits for them.
	ready bool
}

func (h *headerItem) finished() bool { return h.ready }

func (h *headerItem) render(v *view) string {
	var b strings.Builder
	b.WriteString(wrapWords(v.st.blockTitle.Render("prime")+" "+v.st.muted.Render(h.version), v.width) + "\n")
	b.WriteString(v.st.muted.Render(wrapKeys(v.width, "escape interrupt", "ctrl+c clear, twice to exit", "ctrl+d exit", "/ commands", "! bash", "ctrl+o more")))
	if v.expanded {
		b.WriteString("\n\n" + hotkeysText(v))
	} else {
		b.WriteString("\n" + v.st.dim.Render(wrap("ctrl+o shows every key; /hotkeys lists them too", v.width)))
	}
	if len(h.contextFiles) > 0 {
		b.WriteString("\n\n" + v.st.bold.Render("[Context]"))
		for _, f := range h.contextFiles {
			for _, l := range strings.Split(wrapPlain(f, max(v.width-2, 1)), "\n") {
				b.WriteString("\n  " + v.st.muted.Render(l))
			}
		}
	}
	return b.String()
}

// userItem is a message the user sent.
type userItem struct{ text string }

func (*userItem) finished() bool { return true }

func (u *userItem) render(v *view) string {
	lines := strings.Split(wrap(u.text, max(v.width-2, 1)), "\n")
	for i, l := range lines {
		lines[i] = v.st.user.Render(" " + padRight(l, max(v.width-2, 1)) + " ")
	}
	return strings.Join(lines, "\n")
}

// block is a text or thinking block of a reply.
type block struct {
	thinking bool
	text     string
}

// assistantItem is a reply of the model, streamed into blocks as it comes.
type assistantItem struct {
	blocks []block
	// index maps the stream's content index to blocks.
	index map[int]int
	done  bool
	stop  llm.StopReason
	err   string
	// held keeps a failed reply out of the scrollback until the run ends:
	// a reply that is retried is not shown (retry.go).
	held bool
	// live caches the rendering of a reply being streamed, for a frame
	// and a width.
	live                 string
	liveFrame, liveWidth int
	liveSet              bool
}

func (a *assistantItem) finished() bool { return a.done && !a.held }

// delta applies one streamed step.
func (a *assistantItem) delta(e llm.Event) {
	if a.index == nil {
		a.index = map[int]int{}
	}
	switch e.Type {
	case llm.EventTextStart, llm.EventThinkingStart:
		a.index[e.Index] = len(a.blocks)
		a.blocks = append(a.blocks, block{thinking: e.Type == llm.EventThinkingStart})
	case llm.EventTextDelta, llm.EventThinkingDelta:
		i, ok := a.index[e.Index]
		if !ok {
			a.index[e.Index] = len(a.blocks)
			a.blocks = append(a.blocks, block{thinking: e.Type == llm.EventThinkingDelta})
			i = len(a.blocks) - 1
		}
		a.blocks[i].text += e.Delta
	}
}

// finish replaces the streamed blocks with the final message's.
func (a *assistantItem) finish(m *llm.AssistantMessage) {
	a.blocks = a.blocks[:0]
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.Text:
			a.blocks = append(a.blocks, block{text: c.Text})
		case llm.Thinking:
			if c.Redacted {
				a.blocks = append(a.blocks, block{thinking: true, text: "(reasoning the provider keeps encrypted)"})
			} else {
				a.blocks = append(a.blocks, block{thinking: true, text: c.Thinking})
			}
		}
	}
	a.done, a.stop, a.err = true, m.StopReason, m.ErrorMessage
}

func (a *assistantItem) render(v *view) string {
	if !a.done {
		// Markdown is parsed again whole for each rendering: while the
		// reply streams, once a frame is enough.
		if a.liveSet && a.liveFrame == v.frame && a.liveWidth == v.width {
			return a.live
		}
		a.live, a.liveFrame, a.liveWidth, a.liveSet = a.renderBlocks(v), v.frame, v.width, true
		return a.live
	}
	return a.renderBlocks(v)
}

func (a *assistantItem) renderBlocks(v *view) string {
	var parts []string
	for _, b := range a.blocks {
		text := strings.TrimSpace(b.text)
		if text == "" {
			continue
		}
		if b.thinking {
			if v.showThinking {
				parts = append(parts, paint(v.st.thinking, wrap(text, v.width)))
			} else {
				parts = append(parts, v.st.thinking.Render("Thinking…"))
			}
			continue
		}
		if a.done {
			parts = append(parts, v.md.render(text, v.width))
		} else {
			parts = append(parts, v.md.renderPartial(text, v.width))
		}
	}
	switch a.stop {
	case llm.StopReasonAborted:
		msg := "Operation aborted"
		if a.err != "" && !strings.Contains(strings.ToLower(a.err), "abort") {
			msg += ": " + a.err
		}
		parts = append(parts, v.st.errorText.Render(msg))
	case llm.StopReasonError:
		parts = append(parts, v.st.errorText.Render(wrap("Error: "+a.err, v.width)))
	case llm.StopReasonLength:
		parts = append(parts, v.st.warning.Render("The reply was cut off at the model's output limit."))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n\n")
}

// noticeItem is a one-line status, warning or error.
type noticeItem struct {
	level agent.NoticeLevel
	text  string
}

func (*noticeItem) finished() bool { return true }

func (n *noticeItem) render(v *view) string {
	switch n.level {
	case agent.NoticeError:
		return v.st.errorText.Render(wrapWords("Error: "+n.text, v.width))
	case agent.NoticeWarning:
		return v.st.warning.Render(wrapWords("Warning: "+n.text, v.width))
	}
	return v.st.muted.Render(wrapWords(n.text, v.width))
}

// textItem is text the UI composed (the /session report, the key list),
// already styled.
type textItem struct {
	text func(v *view) string
}

func (*textItem) finished() bool          { return true }
func (t *textItem) render(v *view) string { return t.text(v) }

// compactionItem is the [compaction] block: the tokens the compaction
// replaced and the user's instructions; expanded, its receipt and the
// summary.
type compactionItem struct {
	tokensBefore int
	instructions string
	summary      string
	// receipt is what the compaction did (nil when it could not be read).
	receipt *agent.Receipt
}

func (*compactionItem) finished() bool { return true }

func (c *compactionItem) render(v *view) string {
	var b strings.Builder
	b.WriteString(v.st.blockTitle.Render("[compaction]") + "\n")
	from := "Compacted from " + numfmt.Commas(c.tokensBefore) + " tokens"
	if !v.expanded {
		b.WriteString(withHint(v, from))
	} else {
		b.WriteString(wrapWords(v.st.bold.Render(from), v.width))
	}
	if c.instructions != "" {
		b.WriteString("\n" + wrapWords(v.st.muted.Render("Instructions:")+" "+oneLine(c.instructions), v.width))
	}
	if v.expanded && c.receipt != nil {
		b.WriteString("\n" + receiptText(v, c.receipt))
	}
	if v.expanded && strings.TrimSpace(c.summary) != "" {
		b.WriteString("\n\n" + v.md.render(summaryMarkdown(agent.ReadableSummary(c.summary)), v.width))
	}
	return b.String()
}

// withHint is text followed by the key that expands it, wrapped at its
// spaces (the hint is never broken inside a word).
func withHint(v *view, text string) string {
	words := strings.Fields("(ctrl+o to expand)")
	for i, w := range words {
		words[i] = v.st.muted.Render(w)
	}
	return wrapWords(text+" "+strings.Join(words, " "), v.width)
}

// receiptCol is the width of the receipt's row names.
const receiptCol = 14

// receiptText renders a compaction's receipt: the context before and
// after, the messages summarized, why and by whom, how long it took (and,
// for a summary written in the background, how long the conversation
// waited), what the must-survive check kept and put back, and the cost.
// A compaction Prime did not record (pi's, a hook's) shows what its entry
// holds.
func receiptText(v *view, r *agent.Receipt) string {
	var rows [][2]string
	add := func(name, text string) { rows = append(rows, [2]string{name, text}) }
	if r.Recorded {
		add("Context", fmt.Sprintf("%s → %s tokens, %d %s summarized", numfmt.Commas(r.TokensBefore), numfmt.Commas(r.TokensAfter),
			r.Messages, plural(r.Messages, "message", "messages")))
		add("Reason", reasonText(r.Reason))
	}
	switch {
	case r.FromHook:
		add("Summary", "supplied by a hook")
	case r.Deterministic:
		text := "built by code"
		if r.DeterministicReason != "" {
			text += ": " + r.DeterministicReason
		}
		if r.Recorded {
			text += " · took " + shortDuration(r.DurationMs)
		}
		add("Summary", text)
	case r.Recorded:
		add("Summary", "by "+cmp.Or(r.Model, "the session's model")+" · took "+shortDuration(r.DurationMs))
	}
	if r.Background {
		text := "written while the conversation went on"
		if r.Updated {
			text += ", then brought up to date"
		}
		add("Background", text+" · the conversation waited "+shortDuration(r.WaitMs))
	}
	if l := r.Ledger; l != nil {
		text := fmt.Sprintf("%d checked · %d kept by the summary · %d put back", l.Checked, l.Kept, len(l.Repaired))
		if len(l.Unfit) > 0 {
			text += fmt.Sprintf(" · %d without room (kept for the next compaction)", len(l.Unfit))
		}
		text += fmt.Sprintf(" · summary %s → %s tokens (at most %s)",
			numfmt.Commas(l.SummaryTokens), numfmt.Commas(l.RepairedTokens), numfmt.Commas(l.Bound))
		if l.LedgerBudget > 0 {
			text += fmt.Sprintf(" · ledger %s tokens (budget %s)", numfmt.Commas(l.LedgerTokens), numfmt.Commas(l.LedgerBudget))
		}
		add("Must-survive", text)
		for _, it := range l.Repaired {
			add("  put back", string(it.Kind)+": "+cutRunes(oneLine(it.Text), 200))
		}
		for _, it := range l.Lifted {
			add("  lifted", "rule taken out: "+cutRunes(oneLine(it.Text), 200))
		}
		unfit, said := l.UnfitItems()
		for _, it := range unfit {
			add("  no room", string(it.Kind)+": "+cutRunes(oneLine(it.Text), 200))
		}
		if said > 0 {
			add("  no room", fmt.Sprintf("what the user said in %d %s (kept in the ledger)", said, plural(said, "message", "messages")))
		}
	}
	if u := r.Usage; u != nil {
		add("Tokens", fmt.Sprintf("%s in · %s out", numfmt.Commas(u.Input+u.CacheRead+u.CacheWrite), numfmt.Commas(u.Output)))
		if u.Cost.Total > 0 {
			add("Cost", fmt.Sprintf("$%.4f", u.Cost.Total))
		}
	}
	if !r.Recorded && !r.FromHook {
		add("Receipt", "not recorded (made by pi or an older Prime): only the tokens before are known")
	}
	var b strings.Builder
	for i, row := range rows {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(columnRow(v, "", row[0], v.st.muted, row[1], receiptCol))
	}
	return b.String()
}

// reasonText says why a compaction ran.
func reasonText(reason string) string {
	switch agent.Reason(reason) {
	case agent.ReasonManual:
		return "asked for (/compact)"
	case agent.ReasonThreshold:
		return "the context passed the threshold"
	case agent.ReasonOverflow:
		return "the context overflowed the model's window"
	}
	return reason
}

// shortDuration writes milliseconds as 42ms under a second, else as the
// tool blocks write times.
func shortDuration(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	return formatDuration(time.Duration(ms) * time.Millisecond)
}

// fileLists are the <read-files> and <modified-files> lists a summary
// ends with.
var fileLists = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)<(read|modified)-files>\n?(.*?)\n?</(?:read|modified)-files>`)
})

// summaryMarkdown turns a summary's file lists into markdown lines, which
// the renderer would otherwise drop as HTML.
func summaryMarkdown(s string) string {
	return fileLists().ReplaceAllStringFunc(s, func(m string) string {
		g := fileLists().FindStringSubmatch(m)
		files := strings.Fields(g[2])
		for i, f := range files {
			files[i] = "`" + f + "`"
		}
		title := "Files read"
		if g[1] == "modified" {
			title = "Files modified"
		}
		return "**" + title + ":** " + strings.Join(files, ", ")
	})
}

// branchItem is the [branch] block: the summary of a branch left in /tree.
type branchItem struct{ summary string }

func (*branchItem) finished() bool { return true }

func (br *branchItem) render(v *view) string {
	var b strings.Builder
	b.WriteString(v.st.blockTitle.Render("[branch]") + "\n")
	if !v.expanded {
		b.WriteString(withHint(v, "Branch summary"))
		return b.String()
	}
	b.WriteString(v.st.bold.Render("Branch summary"))
	if s := strings.TrimSpace(br.summary); s != "" {
		b.WriteString("\n\n" + v.md.render(summaryMarkdown(s), v.width))
	}
	return b.String()
}

// customItem is an extension's message shown in the transcript.
type customItem struct{ customType, text string }

func (*customItem) finished() bool { return true }

func (c *customItem) render(v *view) string {
	return v.st.blockTitle.Render(wrapPlain("["+c.customType+"]", v.width)) + "\n" + wrap(c.text, v.width)
}

// bashItem is a command the user ran with !cmd or !!cmd.
type bashItem struct {
	id        string
	command   string
	exclude   bool
	output    string
	done      bool
	exitCode  *int
	cancelled bool
	truncated bool
	fullPath  string
	err       string
}

func (b *bashItem) finished() bool { return b.done }

// bashCollapsedLines is how many lines of a user command's output show
// while the block is collapsed.
const bashCollapsedLines = 20

func (b *bashItem) render(v *view) string {
	style := v.st.accent
	if b.exclude {
		style = v.st.dim
	}
	var out strings.Builder
	rule := v.st.rule.Render(strings.Repeat("─", v.width))
	out.WriteString(rule + "\n")
	out.WriteString(style.Render(wrap("$ "+b.command, v.width)))
	if body := strings.TrimRight(b.output, "\n"); body != "" {
		lines := strings.Split(body, "\n")
		if !v.expanded && len(lines) > bashCollapsedLines {
			hidden := len(lines) - bashCollapsedLines
			lines = lines[hidden:]
			out.WriteString("\n" + v.st.muted.Render(fmt.Sprintf("… (%d earlier %s, ctrl+o to expand)", hidden, plural(hidden, "line", "lines"))))
		}
		for _, l := range lines {
			out.WriteString("\n" + wrapPlain(l, v.width))
		}
	}
	var status []string
	switch {
	case b.err != "":
		status = append(status, v.st.errorText.Render("Error: "+b.err))
	case !b.done:
		status = append(status, v.st.muted.Render("running… (escape to cancel)"))
	case b.cancelled:
		status = append(status, v.st.warning.Render("(cancelled)"))
	case b.exitCode != nil && *b.exitCode != 0:
		status = append(status, v.st.errorText.Render(fmt.Sprintf("(exit %d)", *b.exitCode)))
	}
	if b.truncated {
		note := "output truncated"
		if b.fullPath != "" {
			note += "; full output in " + b.fullPath
		}
		status = append(status, v.st.warning.Render(note))
	}
	if len(status) > 0 {
		out.WriteString("\n" + strings.Join(status, " "))
	}
	out.WriteString("\n" + rule)
	return out.String()
}

// wrapPlain wraps a line of program output at its spaces, or hard where a
// word is wider than the line; tabs take 4 columns.
func wrapPlain(s string, width int) string {
	return wrapSpaces(markdown.ExpandTabs(s), width)
}

// formatDuration writes d as the tool blocks show it: 0.4s, 12.3s, 2m5s.
func formatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
}
