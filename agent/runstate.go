package agent

import "fmt"

// runPhase is what the agent is doing: one value, changed only by
// [runPhase.next], under Agent.mu. The facts that hold across phases stay
// data beside it in [conversation] (whether the model began to answer the
// current prompt, the retry count, the recovery flag, a store failure, the
// channels that tell the end of the work).
//
// The phases and what moves between them:
//
//	idle ──prompt──▶ running ──compactStart──▶ compacting ──compactEnd──▶ running
//	                 running ──retryWait────▶ retrying   ──retryEnd────▶ running
//	                 running ──end──▶ idle
//	idle ──manual──▶ manual ──end──▶ idle
//	idle ──manualSummary──▶ summarizing ──end──▶ idle
//
// Every other pair is refused and leaves the phase as it was: a prompt or a
// manual operation while the agent is busy (the caller queues or refuses
// it), an end while a compaction or a retry's wait is still on, a
// compaction outside a prompt's work.
type runPhase uint8

// The phases.
const (
	// phaseIdle: nothing runs; a prompt starts a run.
	phaseIdle runPhase = iota
	// phaseRunning: a prompt's work (its runs of the model, the checks
	// between them); a prompt arriving steers or follows up.
	phaseRunning
	// phaseCompacting: an automatic compaction inside a prompt's work.
	phaseCompacting
	// phaseRetrying: the wait before an automatic retry (AbortRetry ends
	// it).
	phaseRetrying
	// phaseManual: a manual operation that asks no model (a navigation
	// without a summary, undoing a compaction); prompts are refused.
	phaseManual
	// phaseSummarizing: a manual compaction, or a navigation that
	// summarizes the branch it leaves; prompts are refused.
	phaseSummarizing
)

var runPhaseNames = [...]string{"idle", "running", "compacting", "retrying", "manual", "summarizing"}

// String names the phase, for test failures.
func (p runPhase) String() string {
	if int(p) < len(runPhaseNames) {
		return runPhaseNames[p]
	}
	return fmt.Sprintf("runPhase(%d)", p)
}

// runEvent is what changes the phase.
type runEvent uint8

// The events.
const (
	// evPrompt: a prompt was accepted by an idle agent.
	evPrompt runEvent = iota
	// evManual, evManualSummary: a manual operation began, without or
	// with a summary asked of a model.
	evManual
	evManualSummary
	// evCompactStart, evCompactEnd: an automatic compaction began, ended.
	evCompactStart
	evCompactEnd
	// evRetryWait, evRetryEnd: the wait before a retry began, ended.
	evRetryWait
	evRetryEnd
	// evEnd: the work ended (the prompt settled, the manual operation
	// returned).
	evEnd
)

var runEventNames = [...]string{"prompt", "manual", "manualSummary", "compactStart", "compactEnd", "retryWait", "retryEnd", "end"}

// String names the event, for test failures.
func (e runEvent) String() string {
	if int(e) < len(runEventNames) {
		return runEventNames[e]
	}
	return fmt.Sprintf("runEvent(%d)", e)
}

// next is the phase after ev, and whether the transition is legal; when it
// is not, the phase is p.
func (p runPhase) next(ev runEvent) (runPhase, bool) {
	switch {
	case p == phaseIdle && ev == evPrompt:
		return phaseRunning, true
	case p == phaseIdle && ev == evManual:
		return phaseManual, true
	case p == phaseIdle && ev == evManualSummary:
		return phaseSummarizing, true
	case p == phaseRunning && ev == evCompactStart:
		return phaseCompacting, true
	case p == phaseCompacting && ev == evCompactEnd:
		return phaseRunning, true
	case p == phaseRunning && ev == evRetryWait:
		return phaseRetrying, true
	case p == phaseRetrying && ev == evRetryEnd:
		return phaseRunning, true
	case ev == evEnd && (p == phaseRunning || p == phaseManual || p == phaseSummarizing):
		return phaseIdle, true
	}
	return p, false
}

// busy reports whether the agent works: anything but idle.
func (p runPhase) busy() bool { return p != phaseIdle }

// manual reports whether a manual operation runs (prompts are refused).
func (p runPhase) manual() bool { return p == phaseManual || p == phaseSummarizing }

// prompting reports whether a prompt's work goes on (pi's isStreaming).
func (p runPhase) prompting() bool { return p.busy() && !p.manual() }

// compacting reports whether a compaction or a branch summary runs.
func (p runPhase) compacting() bool { return p == phaseCompacting || p == phaseSummarizing }

// move applies ev to the agent's phase (a.mu held) and reports whether it
// was legal; a refused event changes nothing.
func (c *conversation) move(ev runEvent) bool {
	next, ok := c.phase.next(ev)
	c.phase = next
	return ok
}
