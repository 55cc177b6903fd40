package agent

import "testing"

// TestRunPhaseTransitions is the whole table: every phase × every event,
// with the phase that follows and whether it is legal.
func TestRunPhaseTransitions(t *testing.T) {
	type to struct {
		phase runPhase
		ok    bool
	}
	stay := func(p runPhase) to { return to{p, false} }
	table := map[runPhase]map[runEvent]to{
		phaseIdle: {
			evPrompt: {phaseRunning, true}, evManual: {phaseManual, true}, evManualSummary: {phaseSummarizing, true},
			evCompactStart: stay(phaseIdle), evCompactEnd: stay(phaseIdle), evRetryWait: stay(phaseIdle), evRetryEnd: stay(phaseIdle),
			evEnd: stay(phaseIdle),
		},
		phaseRunning: {
			evPrompt: stay(phaseRunning), evManual: stay(phaseRunning), evManualSummary: stay(phaseRunning),
			evCompactStart: {phaseCompacting, true}, evCompactEnd: stay(phaseRunning),
			evRetryWait: {phaseRetrying, true}, evRetryEnd: stay(phaseRunning), evEnd: {phaseIdle, true},
		},
		phaseCompacting: {
			evPrompt: stay(phaseCompacting), evManual: stay(phaseCompacting), evManualSummary: stay(phaseCompacting),
			evCompactStart: stay(phaseCompacting), evCompactEnd: {phaseRunning, true},
			evRetryWait: stay(phaseCompacting), evRetryEnd: stay(phaseCompacting), evEnd: stay(phaseCompacting),
		},
		phaseRetrying: {
			evPrompt: stay(phaseRetrying), evManual: stay(phaseRetrying), evManualSummary: stay(phaseRetrying),
			evCompactStart: stay(phaseRetrying), evCompactEnd: stay(phaseRetrying),
			evRetryWait: stay(phaseRetrying), evRetryEnd: {phaseRunning, true}, evEnd: stay(phaseRetrying),
		},
		phaseManual: {
			evPrompt: stay(phaseManual), evManual: stay(phaseManual), evManualSummary: stay(phaseManual),
			evCompactStart: stay(phaseManual), evCompactEnd: stay(phaseManual),
			evRetryWait: stay(phaseManual), evRetryEnd: stay(phaseManual), evEnd: {phaseIdle, true},
		},
		phaseSummarizing: {
			evPrompt: stay(phaseSummarizing), evManual: stay(phaseSummarizing), evManualSummary: stay(phaseSummarizing),
			evCompactStart: stay(phaseSummarizing), evCompactEnd: stay(phaseSummarizing),
			evRetryWait: stay(phaseSummarizing), evRetryEnd: stay(phaseSummarizing), evEnd: {phaseIdle, true},
		},
	}
	if len(table) != len(runPhaseNames) {
		t.Fatalf("the table has %d phases, there are %d", len(table), len(runPhaseNames))
	}
	for p, row := range table {
		if len(row) != len(runEventNames) {
			t.Fatalf("%v: %d events in the table, there are %d", p, len(row), len(runEventNames))
		}
		for ev, want := range row {
			got, ok := p.next(ev)
			if got != want.phase || ok != want.ok {
				t.Errorf("%v --%v--> %v (legal %v), want %v (legal %v)", p, ev, got, ok, want.phase, want.ok)
			}
			c := conversation{phase: p}
			if c.move(ev) != want.ok || c.phase != want.phase {
				t.Errorf("move %v from %v: phase %v", ev, p, c.phase)
			}
		}
	}
}

// TestRunPhaseQueries is what each phase says to the rest of the agent:
// busy (Busy, Wait, Abort), manual (prompts refused), prompting (pi's
// isStreaming; a prompt steers or follows up), compacting (State).
func TestRunPhaseQueries(t *testing.T) {
	tests := []struct {
		phase                               runPhase
		busy, manual, prompting, compacting bool
	}{
		{phaseIdle, false, false, false, false},
		{phaseRunning, true, false, true, false},
		{phaseCompacting, true, false, true, true},
		{phaseRetrying, true, false, true, false},
		{phaseManual, true, true, false, false},
		{phaseSummarizing, true, true, false, true},
	}
	if len(tests) != len(runPhaseNames) {
		t.Fatalf("%d phases tested, there are %d", len(tests), len(runPhaseNames))
	}
	for _, tt := range tests {
		t.Run(tt.phase.String(), func(t *testing.T) {
			p := tt.phase
			if p.busy() != tt.busy || p.manual() != tt.manual || p.prompting() != tt.prompting || p.compacting() != tt.compacting {
				t.Errorf("busy %v manual %v prompting %v compacting %v, want %v %v %v %v",
					p.busy(), p.manual(), p.prompting(), p.compacting(), tt.busy, tt.manual, tt.prompting, tt.compacting)
			}
		})
	}
}

// TestRunPhaseWalks follows the sequences the agent goes through, and the
// first refused step of ones it must not.
func TestRunPhaseWalks(t *testing.T) {
	tests := []struct {
		name    string
		events  []runEvent
		end     runPhase
		refused int // index of the first refused event, -1 for none
	}{
		{"a prompt with a compaction before it and a retry", []runEvent{evPrompt, evCompactStart, evCompactEnd, evRetryWait, evRetryEnd, evCompactStart, evCompactEnd, evEnd}, phaseIdle, -1},
		{"a manual compaction", []runEvent{evManualSummary, evEnd}, phaseIdle, -1},
		{"an undo, then a prompt", []runEvent{evManual, evEnd, evPrompt}, phaseRunning, -1},
		{"a second prompt while one runs", []runEvent{evPrompt, evPrompt}, phaseRunning, 1},
		{"a manual compaction during a run", []runEvent{evPrompt, evManualSummary}, phaseRunning, 1},
		{"the end while compacting", []runEvent{evPrompt, evCompactStart, evEnd}, phaseCompacting, 2},
		{"the end twice", []runEvent{evManual, evEnd, evEnd}, phaseIdle, 2},
		{"a compaction outside a prompt", []runEvent{evManual, evCompactStart}, phaseManual, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c conversation
			refused := -1
			for i, ev := range tt.events {
				if !c.move(ev) && refused < 0 {
					refused = i
				}
			}
			if c.phase != tt.end || refused != tt.refused {
				t.Errorf("ends %v, first refused %d; want %v, %d", c.phase, refused, tt.end, tt.refused)
			}
		})
	}
}
