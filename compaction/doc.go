// Package compaction keeps a conversation inside its model's context window.
// It decides what a compaction summarizes and keeps ([Prepare]), writes the
// summary with a model or, failing that, by code ([Compact]), and summarizes
// a branch the user leaves in the session tree ([CollectBranch],
// [PrepareBranch], [SummarizeBranch], [NewLeaf]). It does no file I/O: it
// reads root→leaf paths of [session.Entry] values and returns payloads
// ([Result.Entry], [BranchResult.Entry]) for the caller to append.
//
// The behaviour follows spec/compaction.md; where it is silent, pi 1.6
// (spec/pi-1.6-changes.md over spec/pi-reference.md); where both are silent,
// the decisions below. Every pi bug of pi-reference §10.1 that touches this
// package is fixed and listed at the end.
//
// # Using it
//
// A compaction:
//
//	prep, err := compaction.Prepare(path, settings) // path: root→leaf entries
//	// errors.Is(err, compaction.ErrNothingToCompact / ErrAlreadyCompacted):
//	// report err's Reason, write nothing.
//	res, err := compaction.Compact(ctx, prep, compaction.Options{
//		Provider: p, Model: m, ThinkingLevel: ctx.ThinkingLevel,
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
// Without a provider (offline) both build the summary by code. With one,
// they fall back to code when the model cannot do it, and say so in the
// result and in the stored details. A cancelled ctx returns an error
// wrapping the context's error and no result, so nothing is written.
//
// # Preparation
//
// [Prepare] works on the projection ([session.Context.Projection]): the
// path as the model sees it, that is the latest compaction, the entries it
// kept (from its firstKeptEntryId on) except system messages, then every
// entry after it (pi 1.6). Entries the model does not see stay in the
// projection as invisible entries: model and thinking changes, labels,
// session info, extension state, empty branch summaries, context edits and
// the entries they hide, and compactions older than the latest that fall
// inside its kept range (the model never sees those: the latest summary
// folds them in; but they stop the scan-back, step 6). Context edits apply
// as in the context: a hidden entry shows nothing, a replaced one its
// replacement, and that is what is counted and summarized.
//
//  1. The last entry is a compaction: [ErrAlreadyCompacted].
//  2. The span to summarize starts at the previous compaction's kept entry
//     (so what it kept is summarized now or kept again), or right after the
//     compaction when that entry is not on the path.
//  3. Cut points are the entries the model sees as a user, assistant, bash
//     execution, custom or summary message: never a tool result (a result
//     stays with its call), a system message, a message of an unknown role
//     or a compaction.
//  4. The keep-recent walk goes back from the newest entry adding the
//     chars/4 estimate of everything the model sees (custom messages,
//     branch summaries and system messages included, C7a; images count
//     1,200 tokens). Where the sum reaches keepRecentTokens, the cut is the
//     first cut point at or after that entry; if there is none, because the
//     newest tool results alone exceed the budget, the last cut point
//     (C7b). If the sum never reaches it, the first cut point: everything
//     is kept.
//  5. When the sum was reached and all that follows the cut is a failed
//     attempt hidden by context edits (an assistant reply, its tool
//     results, the edits, and nothing else the model could see), the cut
//     moves to the entry after it, so the last input becomes the start of
//     a split turn (pi 1.6, for recovering from an overflowing or cut-off
//     reply).
//  6. The scan-back pulls the invisible entries right before the cut into
//     the kept part; it stops at any entry the model sees (C7c) and at a
//     compaction, and may cross into the previous compaction's kept range
//     (C7e).
//  7. The turn is split when the cut of step 5 is not a turn start (user,
//     bash execution, custom message, branch or compaction summary; C6a,
//     C6b). The split turn's first part, from the nearest turn start
//     before the cut, is summarized on its own (the turn prefix); the
//     history before it normally. No turn start before the cut (a span
//     that begins mid-turn) means no split.
//  8. Nothing in either span: [ErrNothingToCompact] (C4), or
//     [ErrAlreadyCompacted] when nothing the model sees follows the latest
//     compaction. The error's Reason says why in a sentence.
//  9. TokensBefore is the size of the next request
//     ([session.Context.EstimateNext], pi 1.6's projected estimate): the
//     newest valid usage plus chars/4 for the messages after it; but when
//     that usage comes from an entry at or before the latest context edit
//     or compaction on the path, it measured a context that no longer
//     exists, and every message is estimated instead, the system state
//     once (C5).
//  10. File operations accumulate: the previous compaction's lists (unless
//     an extension wrote it, which breaks the chain as in pi), the read,
//     write and edit calls with a non-empty "path" argument in both spans,
//     the calls a script tool made as its result's nestedCalls records
//     them (pi 1.6's {"calls": [{"name", "arguments", ...}]}), and the lists
//     of the branch summaries the model sees inside the span. Paths are kept
//     as written, an empty one in an earlier summary's list included (pi
//     1.6 carries it; only a call's empty path is no path); lists sort in
//     JavaScript order (UTF-16 code units); a file both read and modified
//     is listed as modified.
//
// System messages are never summarized: they are the prompt, which the
// compaction entry carries as its systemMessage. Messages of roles neither
// pi nor Prime knows stop the scan-back but are neither cut points nor
// summarized (pi passes them to its summarizer, whose transcript leaves
// them out: only the message count differs).
//
// # Summary requests
//
// Each request is one user message after Prime's system prompt: the
// transcript in <conversation> tags, the summary being updated in
// <previous-summary> tags, the task (initial, update, turn prefix or
// branch; our own words), and last the user's instructions in
// <user-instructions> tags with a sentence saying they win over the task.
// Last is where a model weighs instructions most; that is what "high
// priority" means here. The instructions reach every request (history,
// turn prefix, branch, every part of a folded span) and are stored, trimmed,
// on the compaction entry.
//
// History and branch summaries follow the spec's format: Goal; Constraints &
// Preferences; Progress (Done, In Progress, Blocked); Key Decisions;
// Reasoning Digest; Next Steps; Critical Context. Code appends the
// <read-files> and <modified-files> lists (pi's layout) and strips the lists
// a previous summary carries before reusing it, so they never repeat. A
// turn prefix has three sections (Turn Request, Done in This Turn So Far,
// Needed to Follow the Rest). A split turn's summary is the history summary,
// a separator ("---" and a bold line), then the turn prefix summary; the two
// requests are made one after the other, history first.
//
// The output limit is min(⌊0.8 × reserveTokens⌋, the model's output limit),
// for every kind of request (a branch uses branchSummary.reserveTokens). The
// reasoning option is the session's thinking level when the model reasons
// and the level is not off. Requests ask the provider not to cache. An
// answer stopped at the output limit is rejected, as is an empty one; a
// "length" stop with fewer output tokens than the limit is a context that
// filled up while the model wrote ([llm.LengthStopOverflow]; llama.cpp's
// server does that), retried smaller as an overflow is, and reported as
// [ErrContextFilled] if it persists. The usage of every answer, failed ones
// included, is summed into the entry's usage.
//
// # The request projection
//
// The transcript (spec "Message Serialization") is built from the messages
// as the model sees them ([session.ToLLM]) into new text; session data is
// never changed. It is exported for hooks and embedders that summarize with
// a model of their own (the spec's "Converting Messages to Text"):
// [Transcript] serializes provider messages with [TranscriptOptions],
// [TranscriptOptionsFor] gives the options of Prime's requests to a model,
// and [Preparation.Transcripts] and [BranchPreparation.Transcript] the texts
// of what [Compact] and [SummarizeBranch] would send. The one implementation
// serves Prime's requests and these functions, so the texts are the same
// byte for byte as long as a span fits one request with all its tool bodies. Parts are separated by a blank line: [User], [Assistant
// reasoning], [Assistant], [Assistant tool calls] (name#id(key=<json>, …) in
// stored argument order, JSON as JavaScript prints it) and [Tool result
// name#id error=<bool>]. The open questions of pi-reference §4.6 are
// settled so:
//
//   - Images become [image] (set off from neighbouring text by a space).
//   - A tool result is useless, and dropped, when it has no text but white
//     space, no image, and is not an error. An empty error is kept (the
//     failure is information) with the body "(no output)"; an image-only
//     result reads [image].
//   - A tool result is orphaned, and dropped, when no assistant message
//     earlier in the same request has a call with its (non-empty) id. It is
//     decided per request, so after rounds are dropped too.
//   - The newest three shown results keep their body; older ones read
//     [tool result] with name, id and error flag intact. A kept body is
//     bounded to its first and last 2,000 UTF-16 units around a marker
//     saying how much was left out (surrogate pairs are never split): heads
//     say what ran, tails how it ended. User and assistant text is not cut.
//   - Reasoning is left out when the summarizer is Claude-family: served
//     over the Anthropic Messages API, by the "anthropic" provider, or with
//     "claude" in its model id (Claude behind Bedrock, Vertex, OpenRouter or
//     a proxy), all case-insensitive. Redacted reasoning is never shown.
//   - The same projection serves the turn prefix and branch summaries; each
//     request counts its own newest three.
//   - A user round starts at each turn start the model sees (a user
//     message, a bash execution not excluded from context, a custom
//     message, a summary). Messages before the first one, in a span that
//     starts mid-turn, are a round of their own: the oldest, dropped first.
//   - The previous summary is never dropped or cut from a request. When it
//     leaves less than 256 tokens for the conversation, the model is not
//     asked; the deterministic summarizer carries it forward.
//   - "Overflow" is errors.Is(err, llm.ErrContextOverflow): the llm layer
//     classifies the vendors' wording; this package never parses it.
//
// # Never stuck
//
// Before sending, the transcript's budget is the summarizer's context
// window (128,000 tokens when unknown) less the output limit, the system
// prompt and the rest of the user message, all by chars/4. If the
// transcript does not fit with 3 tool bodies, 1 is tried, then 0. If it
// still does not fit, the span is folded: as many of the oldest rounds as
// fit go in a first request, and each further request updates the summary
// so far with the next rounds (the update prompt). Dropping old rounds
// instead would lose first the user's original task and constraints, which
// matter most after a compaction. A single round larger than the budget is
// bounded head and tail.
//
// If the provider still answers with a context overflow, at most two
// smaller retries follow. When the answer says nothing of sizes, retry r
// drops the r oldest rounds while another remains, keeps 1 and then 0 tool
// bodies, and bounds the transcript to (4−r)/4 of the budget (head and
// tail, half each), since the estimate proved too low (the spec's ladder).
//
// The summarizer learns how the server counts, and sizes every later
// request of the same compaction or branch summary (retries, further parts
// of a folded span, the turn prefix after the history) with it. The usage
// of each reply, and the request size of a refusal that gives it (llama.cpp's
// n_prompt_tokens; OpenAI's, vLLM's, OpenRouter's, Anthropic's texts), give
// the ratio of the server's tokens to the chars/4 estimate of what was sent;
// the highest seen, plus 10 %, divides the window less the output reserve
// (never below 1: a sparser tokenizer than chars/4 leaves the estimate
// alone). A refusal's window (n_ctx, "maximum context length is N"), or the
// input and output of a context that filled, replaces a larger window the
// model was said to have; the output limit then takes at most a quarter of
// it. A retry after such an answer is fitted again to the smaller budget
// rather than stepped down the ladder: it keeps the oldest rounds, and the
// ones that no longer fit go to the next part, so nothing is dropped. With
// a tokenizer far from chars/4 a job thus overflows once, on its first
// request, instead of on every part. None of this touches the cut
// decisions of [Prepare], which count chars/4 as pi does.
//
// When the model cannot do it — overflow after the retries (or a context
// still filling up), an answer cut off at the output limit, an empty
// answer, or any error left after the provider's own retries — or there is
// no model, the deterministic
// summarizer writes the summary from the summary so far and the messages not
// yet summarized. It never takes over after a cancellation, nor when the
// provider refuses the credentials (401, 403: errors.Is(err, llm.ErrAuth)):
// a user who asked for a model and has a wrong or missing key needs to know,
// and a summary written by code, once stored, is not rewritten by the model
// they meant to use. The compaction then fails and writes nothing; --offline
// asks for the summary by code explicitly. Its summary has the same
// sections: the first substantive request word for word (head and tail)
// and later changes of direction on one line each; the user's sentences
// stating rules or preferences, word for word, once each; the files changed
// (by directory, with counts) and the commands that succeeded; the latest
// request and calls without a result as In Progress; the failures no later
// success resolved as Blocked; the latest request and the last failure as
// Next Steps; the exact error texts, the exit codes of commands that failed,
// the files the latest request touched, branch summaries, extension
// messages and the last assistant message as Critical Context. Key
// Decisions and Reasoning Digest say they were not recorded. A previous
// summary in this format is merged section by section (its counts re-added,
// its failures dropped once resolved; anything else is carried into
// Critical Context verbatim). A compaction must shrink the context, so the
// summary takes at most a fifth of what it replaces (the span and the
// summary it updates), at least min(1,000 tokens, three quarters of it),
// never more than the output limit; to fit, its lists keep their newest
// items (the rules longest) and long items are cut head and tail, but every
// rendering must hold what the must-survive ledger holds (below): a rule
// left out of a bounded list is put back, the oldest included, and a
// smaller rendering is tried when that passes the budget. The
// summary says it was built by code and why; details carry
// "summarizer": "deterministic" and "deterministicReason" next to pi's
// readFiles and modifiedFiles arrays, and the next compaction's update prompt
// asks the model to rewrite such a summary properly.
//
// # What must survive
//
// Before a summary is asked for, [Prepare] (and [PrepareBranch]) extract
// from the span what it must not lose, into a [Ledger]: the user's sentences
// stating rules or preferences word for word (from /compact instructions
// too), the current request when only the summary will hold it, the
// latest failure not resolved since, the pins of the path ([Pins]). The
// previous compaction's ledger (its details, member "ledger") is read back
// first, so the ledger accumulates like the file lists. After the model (or
// code) answered, every item is looked for in the summary, white space
// aside; what is missing is written back by code into Constraints &
// Preferences or Critical Context (created where they belong), within
// [SummaryBound] (never more than a model's summary may be, and a quarter
// smaller than what the summary replaces; the summary by code keeps its own,
// smaller budget), and the check is stored as "ledgerCheck". The modified
// files are in the file lists code appends to every summary. A hook's
// summary is the hook's: not repaired, and its entry breaks the chain, as
// for the file lists. [Breakdown] measures what fills a context by kind and
// what a compaction now would cut and keep.
//
// # Branch summaries
//
// [CollectBranch] finds the common ancestor (the first entry on the target's
// path, walking up, that is on the old path) and collects the old path's
// entries after it, compactions included. [PrepareBranch] takes messages
// newest first until the budget (the model's window less
// branchSummary.reserveTokens) would be passed; a compaction or branch
// summary that passes it is still taken while less than 90 % is used. As in
// pi 1.6, the branch's latest context edit of a message or custom message
// hides it or replaces its content, every branch summary is a message (an
// empty one counts 0 tokens), and system messages count. [SummarizeBranch]
// uses the branch prompt, the same projection, ladder and fallback (shown
// neither system messages nor empty branch summaries, which say nothing),
// opens the summary with a two-line preamble and ends it with the branch's
// file lists. [NewLeaf]: a user message or custom_message target
// moves the leaf to its parent and hands its text back for editing; any
// other target becomes the leaf.
//
// # pi bugs fixed (pi-reference §10.1)
//
//   - #4: a branch summary's fromId is the entry navigated from (the old
//     leaf), as the spec defines it; pi stores the new position.
//   - #6 (and its variants C7d, C7e): a metadata entry right before a
//     turn-start cut no longer makes the previous, complete turn a split
//     turn's prefix. The kept part still starts at the metadata entry, but
//     the split is decided on the cut point itself: no split, and the
//     previous turn is summarized as history.
//   - #7: oversized trailing tool results no longer mean "nothing
//     summarized"; the cut falls back to the last cut point (as pi 1.6).
//   - #8, #9, #23: custom messages and branch summaries count in the walk;
//     the span starts at the previous kept entry; all-zero usage is no
//     usage (the latter two through [session] as well).
//   - #10: a split turn with no history keeps the previous summary (pi
//     1.6), without repeating its file lists (pi 1.6 repeats them).
//   - #11: /compact instructions reach the turn prefix request too, and
//     every other request.
//   - #12: the split turn's two requests run one after the other.
//   - #13, #14: a summary cut off at the output limit is never stored,
//     branch summaries included; the output limit never exceeds the
//     model's; the reasoning option follows the session's thinking level.
//   - #20: branch summaries see tool results, take file operations from
//     every collected entry (not only those within the budget) and from
//     compactions' details; compactions take branch summaries' file lists.
//   - #22: a branch with nothing to summarize gets no summary entry.
//   - C4 (pi before 1.6): no model call with an empty conversation.
//   - pi 1.6's branch walk fails on a system message whose content is
//     null (it reads the content without the null check its context
//     building has); Prime reads it as "" everywhere.
//
// Deliberately not changed, for compatibility with pi's numbers: paths are
// not normalised (#21), excluded bash executions count in estimates (#24),
// and branch collection does not stop at a compaction (#5).
//
// # Checked against pi
//
// TestPiOracle (opt-in: PRIME_PIORACLE names tools/pioracle/pioracle)
// compares thousands of cases, on sessions of every kind session/sessiongen
// makes, on its hand-written edge cases and on pi's own files, with pi 1.6
// itself: the context and both its estimates, every decision and number of
// prepareCompaction, and the branch-summary walk (prepareBranchEntries,
// compared under pi's rules, without Prime's additions of #20). The only
// differences are the fixes above that touch a preparation, #6 and #20,
// each checked by applying the fix to pi's answer, and one pi 1.6 bug: its
// branch walk fails on a system message whose content is null.
// TestPiFilesRecorded keeps pi's answers on its own files without node.
package compaction
