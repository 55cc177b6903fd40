package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// site is where a compaction check runs.
type site int

const (
	// siteBeforePrompt: before a new prompt, on the last reply of the path
	// (aborted ones included).
	siteBeforePrompt site = iota
	// siteBetweenTurns: between the turns of a run, threshold only.
	siteBetweenTurns
	// siteAfterRun: after a run ended and no retry was decided.
	siteAfterRun
)

// The texts of a recovery that failed twice (the conversation still does not
// fit after one compaction and retry).
const (
	textOverflowAgain = "the conversation still overflows the model's context window after one compaction and retry; " +
		"compact it with instructions (/compact), start a new session, or use a model with a larger window"
	textLengthAgain = "the reply was cut off again after one compaction and retry; " +
		"ask for a shorter answer, compact with instructions (/compact), or use a model with a larger window"
)

// ErrRecoveryFailed is the error of a CompactionEnd that reports an overflow
// (or cut-off reply) recovery tried once already: the agent does not try
// again.
var ErrRecoveryFailed = errors.New("recovery failed")

// checkCompaction is pi 1.6's compaction check after a run and before a
// prompt: recovery from an overflow or a reply cut off by a full context
// (hide the failed reply, compact, retry once), compaction of a silent
// overflow, then the threshold. It reports whether the failed reply should be
// sent again (only after a run, when a recovery compaction succeeded).
func (a *Agent) checkCompaction(ctx context.Context, where site, last lastReply) bool {
	msg := last.msg
	if msg == nil || last.stale {
		return false // no reply, or one from before the latest compaction
	}
	a.mu.Lock()
	enabled, model, lastErr, recovered := a.conv.autoCompact, a.conv.model, a.conv.lastErr, a.conv.recovered
	a.mu.Unlock()
	if !enabled || model == nil {
		return false
	}
	if where == siteAfterRun && msg.StopReason == llm.StopReasonAborted {
		return false
	}
	switch over := compaction.OverflowOf(msg, model, lastErr); over {
	case compaction.SilentOverflow:
		a.autoCompact(ctx, ReasonOverflow, false)
		return false
	case compaction.ContextOverflow, compaction.CutOff:
		if recovered {
			text := textOverflowAgain
			if over == compaction.CutOff {
				text = textLengthAgain
			}
			a.emit(CompactionEnd{Reason: ReasonOverflow, Err: fmt.Errorf("%w: %s", ErrRecoveryFailed, text)})
			return false
		}
		a.mu.Lock()
		a.conv.recovered = true
		a.mu.Unlock()
		a.omitLastReply()
		ok := a.autoCompact(ctx, ReasonOverflow, where == siteAfterRun)
		return ok && where == siteAfterRun
	}
	a.checkThreshold(ctx, where, msg)
	return false
}

// checkThreshold compacts when the context has grown past the model's window
// less reserveTokens (compaction.ShouldCompact), else sees whether a
// background summary should start.
func (a *Agent) checkThreshold(ctx context.Context, where site, msg *llm.AssistantMessage) {
	a.mu.Lock()
	enabled, model := a.conv.autoCompact, a.conv.model
	a.mu.Unlock()
	if !enabled || model == nil || model.ContextWindow <= 0 || msg == nil {
		return
	}
	tokens, ok := a.thresholdTokens(where, msg)
	if !ok {
		return
	}
	s := a.compactionSettings(model.Provider + "/" + model.ID)
	s.Enabled = enabled // the agent's switch (SetAutoCompaction)
	if compaction.ShouldCompact(tokens, model.ContextWindow, s) {
		a.autoCompact(ctx, ReasonThreshold, false)
	} else {
		a.maybeStartBackground(ctx, tokens, model, s)
	}
}

// thresholdTokens measures the context for the threshold check
// (compaction.ThresholdTokens): the projected estimate between turns, and
// whenever failed attempts are hidden.
func (a *Agent) thresholdTokens(where site, msg *llm.AssistantMessage) (int, bool) {
	a.mu.Lock()
	sctx, err := a.s.Context("")
	projected := where == siteBetweenTurns || hasContextEdits(a.s.LeafView())
	a.mu.Unlock()
	if err != nil {
		return 0, false
	}
	return compaction.ThresholdTokens(sctx, msg, projected)
}

// hasContextEdits reports whether the part of the path the model sees (the
// latest compaction's kept range and what follows it) holds a context_edit
// entry.
func hasContextEdits(path session.PathView) bool {
	from := 0
	for i := path.Len() - 1; i >= 0; i-- {
		if path.Type(i) == session.TypeCompaction {
			from = i + 1
			if k := path.KeptStart(i); k >= 0 {
				from = k
			}
			break
		}
	}
	for i := from; i < path.Len(); i++ {
		if path.Type(i) == session.TypeContextEdit {
			return true
		}
	}
	return false
}

// autoCompact runs an automatic compaction and reports whether it wrote one.
// When there is nothing to compact it does nothing and says nothing (pi
// 1.6); a failure is reported as a CompactionEnd and the conversation goes
// on.
func (a *Agent) autoCompact(ctx context.Context, reason Reason, willRetry bool) bool {
	a.setCompacting(true)
	defer a.setCompacting(false)
	plan, err := a.PlanCompaction(ctx, CompactRequest{Reason: reason})
	var nc *compaction.NotCompactableError
	switch {
	case errors.As(err, &nc):
		return false
	case err != nil:
		a.emit(CompactionEnd{Reason: reason, Err: err, Aborted: isCancelled(cancelled(ctx, OpCompaction, err))})
		return false
	}
	plan.WillRetry = willRetry
	if reason == ReasonThreshold {
		plan = a.useBackground(ctx, plan)
	}
	_, err = a.RunCompaction(ctx, plan)
	return err == nil
}

// setCompacting moves the agent into the phase of an automatic compaction
// inside a prompt's work, or back out of it.
func (a *Agent) setCompacting(on bool) {
	ev := evCompactEnd
	if on {
		ev = evCompactStart
	}
	a.mu.Lock()
	a.conv.move(ev)
	a.mu.Unlock()
}

// omitLastReply hides the last reply on the path, and the tool results that
// follow it, from the model with context_edit entries (pi 1.6 records failed
// attempts so, durably): the entries stay in the file, the requests leave
// them out.
func (a *Agent) omitLastReply() {
	a.mu.Lock()
	targets := lastReplyEntries(a.s.LeafView())
	a.mu.Unlock()
	ps := make([]session.Payload, len(targets))
	for i, id := range targets {
		ps[i] = &session.ContextEditEntry{TargetID: id}
	}
	a.appendEntries(ps, "could not hide the failed reply from the model")
}

// lastReplyEntries returns the ids of the last assistant reply on path and of
// the tool results after it, in path order; none when the last message is
// neither.
func lastReplyEntries(path session.PathView) []string {
	var results []string
	for i := path.Len() - 1; i >= 0; i-- {
		if path.Type(i) != session.TypeMessage {
			continue
		}
		e := path.Entry(i)
		switch role, _ := e.MessageRole(); role {
		case llm.RoleToolResult:
			results = append(results, e.ID)
		case llm.RoleAssistant:
			ids := []string{e.ID}
			for j := len(results) - 1; j >= 0; j-- {
				ids = append(ids, results[j])
			}
			return ids
		default:
			return nil
		}
	}
	return nil
}
