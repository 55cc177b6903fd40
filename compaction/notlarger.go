package compaction

import (
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// withinReplaced makes a summary built by code no larger than what it
// replaces, as the context estimates them (the previous summary as stored,
// and the messages of both spans), so that a compaction by code never
// makes a context bigger. It tries, in order: the summary with its file
// lists; the summary cut head and tail (the marker and goal lead it, the
// critical context and pins end it) with the lists; the summary alone (the
// lists stay in the details, where the next compaction reads them); the
// summary cut alone. When not even a cut fits (a span smaller than a
// summary's frame), there is nothing worth compacting; the error says why
// no model wrote the summary (why) and why code cannot.
func withinReplaced(summary, fileLists string, prep *Preparation, why string) (string, string, error) {
	history, prefix := prep.spans()
	replaced := tokensOf(prep.PreviousSummary)
	for _, m := range history {
		replaced += session.EstimateTokens(m)
	}
	for _, m := range prefix {
		replaced += session.EstimateTokens(m)
	}
	// In UTF-16 units: a text of at most most units estimates at most
	// replaced tokens.
	most := replaced * 4
	if llm.UTF16Len(summary+fileLists) <= most {
		return summary, fileLists, nil
	}
	// headTail's mark takes at most cutMark units; a cut keeps at least
	// least units of the summary.
	const cutMark, least = 64, 200
	cut := func(units int) string { return headTail(summary, units*2/3, units-units*2/3) }
	if units := most - llm.UTF16Len(fileLists) - cutMark; units >= least {
		return cut(units), fileLists, nil
	}
	if llm.UTF16Len(summary) <= most {
		return summary, "", nil
	}
	if units := most - cutMark; units >= least {
		return cut(units), "", nil
	}
	return "", "", notCompactable(ErrNothingToCompact,
		"%s, and a summary built by code would take %d tokens, more than the %d tokens of conversation it would replace",
		why, tokensOf(summary+fileLists), replaced)
}
