// Package compaction keeps a conversation inside its model's context window.
//
// It decides what a compaction summarizes and keeps ([Prepare]), writes the
// summary with a model or, failing that, by code ([Compact]), and summarizes
// a branch the user leaves in the session tree ([CollectBranch],
// [PrepareBranch], [SummarizeBranch], [NewLeaf]). It does no file I/O: it
// reads root→leaf paths of [session.Entry] values and returns payloads
// ([Result.Entry], [BranchResult.Entry]) for the caller to append.
//
// A compaction:
//
//	prep, err := compaction.Prepare(path, settings) // path: root→leaf entries
//	// errors.Is(err, compaction.ErrNothingToCompact / ErrAlreadyCompacted):
//	// report err's Reason, write nothing.
//	res, err := compaction.Compact(ctx, prep, compaction.Options{
//		Provider: p, Model: m, ThinkingLevel: level,
//		CustomInstructions: text, Progress: show,
//	})
//	// append res.Entry() as a child of the leaf.
//
// A branch summary when navigating from oldPath's leaf to target:
//
//	br := compaction.CollectBranch(oldPath, targetPath)
//	leaf, editorText, err := compaction.NewLeaf(target)
//	bp, err := compaction.PrepareBranch(br.Entries, compaction.BranchBudget(m, reserve))
//	res, err := compaction.SummarizeBranch(ctx, bp, opts)
//	// errors.Is(err, ErrNothingToSummarize): no entry, just move the leaf.
//	// Otherwise append res.Entry(br.OldLeafID) as a child of leaf.
//
// The guarantees a caller relies on:
//
//   - The cut decisions and the token estimates are pi 1.6's (chars/4), so
//     pi opens the result with the same context; the one exception is a
//     compaction the user asked for ([Settings].Manual), which summarizes
//     everything before the latest exchange when pi would keep it all. A tool result is never
//     separated from its call; system messages are never summarized.
//   - A cancelled ctx returns an error wrapping the context's error and no
//     result, so nothing is written. So does a provider that refuses the
//     credentials (errors.Is(err, llm.ErrAuth)).
//   - Otherwise a compaction always ends with a summary: a span too large
//     for the summarizer is folded over several requests, an overflow is
//     retried smaller, and when the model still cannot do it (or there is
//     none) the summary is built by code, says so, and is marked in the
//     entry's details ("summarizer": "deterministic").
//   - What the user must not lose — rules and preferences however phrased,
//     what they said, the current request, the latest unresolved failure,
//     pins — is collected into a [Ledger] before the summary is asked for,
//     and written back by code when the summary left it out, within
//     [SummaryBound].
//   - Every summary ends with the lists of files read and modified,
//     accumulated over earlier compactions and branch summaries.
//
// [Transcript] and [TranscriptOptionsFor] give hooks the exact text Prime
// sends a summarizer; [Breakdown] measures what fills a context and what a
// compaction now would cut and keep.
//
// The reasoning behind each rule (the preparation's steps, the request
// projection, the retry ladder, the summary by code, the pi bugs fixed and
// kept) is in docs/compaction.md.
package compaction
