// Package hook lets users and embedding programs take part in compaction and
// tree navigation: cancel them, reshape what a summary is made from, or
// write the summary themselves, as pi's extension events let extensions
// do.
//
// There are two kinds of handler. Programs that embed Prime pass in-process
// handlers, a [Hooks] value of optional funcs (combined with [Compose]).
// Users declare command hooks in settings ([settings.Hook]): an executable
// that receives the event as one JSON object on stdin and answers with one
// JSON object on stdout. A [Runner] holds both and dispatches the events;
// the orchestration (package agent) calls it at five moments.
//
// # Using it
//
// Build one runner per process (or per command) and print what it skipped:
//
//	r := hook.New(st, hook.Options{Disabled: noHooks, Hooks: embedded})
//	for _, s := range r.Skipped() { warn(s) } // untrusted project, --no-hooks, unknown event
//	ag := agent.New(sess, agent.Config{Settings: st, Hooks: r}) // package agent does what follows
//
// docs/hooks.md shows the calls a program that does its own orchestration
// makes, for a compaction and for a move in the tree.
//
// A nil *Runner has no handlers, and with no handler for an event a
// dispatch costs a few microseconds: callers need no special case.
//
// # Order
//
// In-process handlers run first, in the order given to [Compose], then
// command hooks: the global settings file's, then the project's, each in
// file order. Every handler is awaited before the next starts, and every
// event goes to the handlers in the same order (so the before-compact
// handlers of hooks A and B run A, B, and their after-event handlers A, B
// too). In-process handlers come first because they belong to the program
// running Prime: its policy (redacting what external commands may see,
// refusing a compaction) applies before any command from settings runs.
//
// # Events
//
// Events are sent to commands as one line of JSON; every member listed is
// always present unless marked. Entries are the session file's objects, byte for byte as
// far as JSON allows (text that is not valid UTF-8 becomes U+FFFD),
// messages are in the session file's format, and an id that does not exist
// is null.
//
//	session_before_compact
//	  {"type", "preparation": {"firstKeptEntryId", "messagesToSummarize": [message],
//	     "turnPrefixMessages": [message], "isSplitTurn", "tokensBefore",
//	     "previousSummary" (only when there is one), "fileOps": {"read", "written", "edited"},
//	     "settings": {"enabled", "reserveTokens", "keepRecentTokens"},
//	     "previousSummarizer" (Prime's: "deterministic" when code wrote the previous summary)},
//	   "branchEntries": [entry] (root to leaf), "customInstructions" ("" for none),
//	   "reason": "manual"|"threshold"|"overflow", "willRetry",
//	   "transcript": {"reasoning", "toolBodies", "history", "turnPrefix"} or null}
//	session_compact
//	  {"type", "compactionEntry": entry, "fromExtension", "reason", "willRetry"}
//	session_compact_failed
//	  {"type", "reason", "errorMessage", "aborted", "willRetry", "fromExtension"}
//	session_before_tree
//	  {"type", "preparation": {"targetId", "oldLeafId", "commonAncestorId",
//	     "entriesToSummarize": [entry], "userWantsSummary", "customInstructions",
//	     "replaceInstructions", "label"},
//	   "transcript": {"reasoning", "toolBodies", "branch"} or null}
//	session_tree
//	  {"type", "newLeafId", "oldLeafId", "summaryEntry": entry or null, "fromExtension"}
//
// transcript is what would be summarized as text, serialized as Prime's own
// summary requests hold it ([compaction.Transcript], for the summarizer's
// model family: reasoning kept unless it is Claude, the newest three tool
// bodies), so a hook in any language can send it to a model as it is:
// history and turnPrefix for a compaction (a turn prefix only when the turn
// is split; [CompactTranscript]), branch for the messages of the branch
// within the summarizer's budget ([BranchTranscript]). The orchestration
// makes it only when a handler receives the event (null otherwise, or when
// an embedder leaves it out); after a handler replaces the message arrays
// the runner makes it again, so later handlers read the text of the arrays
// they get.
//
// testdata/events.golden shows one of each. In-process handlers receive the
// same data as Go values ([BeforeCompactEvent], ...); the event types also
// decode this JSON, for command hooks written in Go.
//
// # Answers
//
// Only the two before-events take answers; after-events ignore them. An
// empty stdout, or null, is no answer. Otherwise stdout must hold exactly
// one JSON object (valid UTF-8, no repeated member names, nothing before or
// after it; diagnostics belong on stderr). Members Prime does not know are
// ignored, and null means absent.
//
//	session_before_compact
//	  {"cancel": bool, "preparation": {"messagesToSummarize": [message], "turnPrefixMessages": [message]},
//	   "compaction": {"summary", "firstKeptEntryId", "tokensBefore", "details": any, "usage": usage}}
//	session_before_tree
//	  {"cancel": bool, "summary": {"summary", "details": any},
//	   "customInstructions": string, "replaceInstructions": bool, "label": string}
//
// An answer is used whole or not at all. It is invalid, reported and
// ignored, when a member has the wrong type, a message does not decode or
// has a role Prime does not know, or when its summary is not valid:
//
//   - a compaction needs a summary that is not blank, a firstKeptEntryId
//     that is an entry of the current path (the event's branchEntries; pi
//     stores any id and then keeps nothing), and a tokensBefore
//     that is a whole number from 0 to 2^53−1 (1e3 and 2.0 are whole;
//     it is stored as given, as pi does). details may be any JSON value
//     and usage a usage object; both are stored as given;
//   - a branch summary needs a summary that is not blank.
//
// So {"cancel": "yes"} does not cancel, and {"cancel": true} beside an
// invalid compaction does not either: a handler whose answer is wrong is
// treated as broken, not guessed at. An in-process handler's result goes
// through the same JSON codec, so the same rules hold for it to the letter
// (a negative TokensBefore, details that are not JSON or a summary that is
// not UTF-8 make it invalid), and the runner keeps a copy the handler can
// no longer change.
//
// # Folding
//
// pi lets the last non-empty answer replace all earlier ones, so a later
// handler's {} erases an earlier handler's summary. Prime folds
// the answers in order instead:
//
//   - cancel stops at once: later handlers do not run, nothing is written,
//     and the decision names the handler;
//   - a preparation answer replaces each array it sets, and only those:
//     later handlers see the new arrays, and so does Prime's summarizer when
//     no handler writes the summary. firstKeptEntryId, isSplitTurn,
//     tokensBefore, previousSummary, fileOps and settings stay as prepared
//     (as in pi, which keeps the rest of the preparation). The
//     arrays are what the summary is made from, not what happened: the file
//     lists still name every file the session touched, and the cut, hence
//     isSplitTurn, is not moved by a projection. A split turn whose prefix
//     a handler empties is summarized as plain history;
//   - a valid compaction becomes the summary to store (fromHook true, with
//     the user's trimmed instructions, without Prime's file lists). A later
//     valid compaction replaces it; a later answer without one, {}
//     included, leaves it, and so does a later invalid one. A handler that
//     wants no compaction at all answers cancel;
//   - session_before_tree folds alike: customInstructions,
//     replaceInstructions and label replace the running value when present
//     (later handlers see it), a valid summary replaces an earlier one, and
//     a summary is used only when the user asked for one.
//
// After the dispatch the orchestration appends the entry itself and passes
// it to the after-event, so session_compact carries exactly the entry
// written (pi looks it up by summary text and finds the oldest of equal
// ones).
//
// # Isolation
//
// Handlers cannot change the session behind the orchestration's back. An
// in-process handler receives a deep copy of the event (the preparation
// through its JSON form, each entry re-read from a copy of its bytes), so
// changing it changes nothing for the caller or for the next handler; the
// caller's preparation is never modified ([CompactDecision.Preparation] is
// a new value). A command only ever sees bytes.
//
// # Failures and timeouts
//
// A handler that fails is reported ([Report]: the event, the handler, for a
// command the settings file and key declaring it, what happened, the end of
// its stderr) and the others still run; without an answer, Prime does what
// it would have done without the handler (pi's test 43). Failing means: an
// in-process handler returns an error, panics (the report carries the
// stack) or runs past its timeout (its context is cancelled; if it ignores
// that it is abandoned, its result ignored); a command cannot be started,
// exits with a non-zero status, is killed by a signal, runs past its
// timeout, or writes more than [Options.MaxOutput] bytes (64 MiB by
// default) to stdout; or either answers invalidly.
//
// Each handler has a timeout: its own (a command's "timeoutMs",
// [Hooks.Timeout]), else [Options.Timeout], else [DefaultTimeout] (60 s,
// generous because the usual before-compact hook asks a model). A command
// runs in a process group of its own; at the timeout, when it writes too
// much, or when ctx is done, the whole group is killed (SIGKILL), so a
// shell script's children die with it. When a command exits but processes
// it started still hold its stdout or stderr open, they are killed after a
// second and its answer counts. stderr is kept (its last 64 KiB; a report
// quotes the last 20 lines).
//
// When ctx is done during a before-event (the user pressed Ctrl-C),
// dispatch stops, the running command is killed, nothing is reported
// against the handler, and the method returns ctx's error: the caller
// treats the operation as aborted. After-events stop calling handlers once
// ctx is done; pass context.WithoutCancel(ctx) to notify them regardless.
//
// # Commands
//
// A command hook's command is resolved when the runner is built: "~/x" is
// in the home directory; a relative path with a slash ("./x.sh",
// "hooks/x") is relative to the directory of the settings file that
// declares it, so a project's hooks travel with its .prime/agent
// directory; a bare name is looked up in PATH when the hook runs (never in
// the current directory). Arguments are passed as given, without a shell.
// The command runs in [Options.Dir], by default the project directory
// (else Prime's working directory), with Prime's environment plus
// PRIME_HOOK_EVENT (the event), PRIME_HOOK_SETTINGS (the declaring file),
// PRIME_PROJECT_DIR (when there is a project), [Options.Env] and what
// [Runner.WithEnv] adds (package agent adds PRIME_SESSION_FILE,
// PRIME_SESSION_ID and PRIME_LEAF_ID for each operation).
//
// # Trust
//
// A project's settings come with the repository, so its hooks could run
// anything on the machine of whoever opens it. They run only once the user
// has trusted the project ([settings.Settings.Trusted], recorded by
// "prime trust" in the global settings, which a project cannot write).
// Until then [Runner.Skipped] lists each of them with the reason (its
// [Report.Skip] says which, for callers that group them) and the command
// that changes it. Options.Disabled (--no-hooks) skips every
// command hook, and hooks for events Prime does not emit are skipped with
// the list of the events it does. In-process handlers are code the
// embedding program chose and always run.
package hook
