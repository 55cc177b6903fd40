package agent

import (
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
)

// compactTranscript is the transcript session_before_compact carries: what
// the plan's summarizer would be sent, projected for its model family. It is
// made only when a handler will receive it.
func compactTranscript(hooks *hook.Runner, plan *CompactionPlan) *hook.CompactTranscript {
	if !hooks.Handles(hook.EventBeforeCompact) {
		return nil
	}
	return hook.NewCompactTranscript(plan.Preparation, compaction.TranscriptOptionsFor(plan.Summarizer.Model))
}

// branchTranscript is the transcript session_before_tree carries: the part of
// the branch within the summarizer's budget, projected for its model family.
// It is made only when a handler will receive it.
func branchTranscript(hooks *hook.Runner, plan *NavigationPlan) *hook.BranchTranscript {
	if !hooks.Handles(hook.EventBeforeTree) || plan.Preparation == nil {
		return nil
	}
	return hook.NewBranchTranscript(plan.Preparation, compaction.TranscriptOptionsFor(plan.Summarizer.Model))
}
