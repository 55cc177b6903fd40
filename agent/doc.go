// Package agent runs a session: it is the one place that brings together
// the session file (package session), the model-tools loop (loop), the
// compaction engine (compaction), the settings (settings), the models (llm,
// llm/registry), the tools (tool) and the extension hooks (hook). The TUI,
// print and JSON modes, RPC mode and the "prime compact" and "prime branch"
// commands all call the same methods and read the same events, so every
// front end behaves the same.
//
// It provides:
//
//   - the conversation ([Agent.Prompt], [Agent.Steer], [Agent.FollowUp],
//     [Agent.Abort], [Agent.Wait]), with automatic retries and compaction;
//   - manual compaction ([Agent.Compact], or [Agent.PlanCompaction] for a
//     dry run followed by [Agent.RunCompaction]);
//   - tree navigation with an optional summary of the branch left
//     ([Agent.Navigate], or [Agent.PlanNavigation] and
//     [Agent.RunNavigation]);
//   - models and thinking levels, sessions (new, switch, fork, clone), the
//     user's own shell commands ([Agent.RunBash]);
//   - what survives compaction and what it costs: pins ([Agent.Pin],
//     [Agent.PinMessage], [Agent.Unpin], [Agent.Pins]; pins.go), the summary
//     written in the background before the threshold (background.go;
//     [Agent.BackgroundSummary]), the receipt of a compaction
//     ([Agent.Receipt], [CompactionResult].Receipt), undoing one
//     ([Agent.Uncompact]), and what fills the context
//     ([Agent.ContextBreakdown]).
//
// [Config].Events hears everything as it happens, as one typed stream (see
// [Event]); [MarshalEvent] gives pi's JSON form of each event.
//
//	ag, err := agent.Load(path, agent.Config{Settings: st, Events: show})
//	res, err := ag.Compact(ctx, agent.CompactRequest{Instructions: "focus on the parser"})
//	// errors.Is(err, compaction.ErrNothingToCompact / ErrAlreadyCompacted): an outcome, not a failure
//	// errors.Is(err, agent.ErrCancelled): Ctrl-C or a hook's cancel; nothing was written
//	// errors.As(err, &modelErr): no model, unknown model, or no API key
//
// # The conversation
//
// A prompt starts a run on a goroutine the agent owns (pi 1.6's agent
// session over pi's agent-core loop, which is package loop): the compaction
// check before the prompt, then the system prompt patch if the prompt or the
// tools changed, the user message, and the loop's turns. Every message is
// appended to the session the moment it ends (the file itself is created
// with the first user message), and each request is built from the
// session's current path: what the model sees is always what the file says.
// After the run, as pi does: an automatic retry of a transient failure
// (retry.* settings; the failed reply hidden with a context_edit entry,
// durably), then the compaction check (overflow and cut-off recovery: hide
// the reply, compact, send it again, once; a silent overflow compacts; the
// threshold compacts), then queued messages start another run; then
// AgentSettled. Between the turns of a run the threshold is checked too, so
// a long tool loop compacts before its next request.
//
// The system prompt lives in the session as pi 1.6 keeps it: a system
// message with named sections (preamble, tools, rules, addendum,
// project_context, cwd, and pins when the path has any) and the tools'
// declarations, and later patches
// with only what changed; a compaction carries the replayed state. So pi
// 1.6 reads Prime's files with the same context and the same estimates.
//
// Decisions where pi differs or is silent:
//
//   - After an abort no further request is sent: no empty aborted reply is
//     stored after aborting during tools (pi sends one).
//   - A prompt arriving while the agent works, before the model began
//     answering the prompt being started, is queued as a follow-up (pi can
//     lose it); once the model answers, a prompt needs steer or followUp
//     (else ErrBusy). Steer and follow-up while idle are prompts.
//   - A reply is stale for the compaction checks when a compaction follows
//     it on the path (pi compares timestamps, which two events within one
//     millisecond defeat).
//   - A reply cut off by the output limit with its output below the model's
//     limit is recovered as an overflow (llm.LengthStopOverflow); one that
//     used the whole limit is not.
//   - A message that cannot be stored stops the run with a Notice: going on
//     would lose the conversation.
//
// # Compaction
//
// The settings are the effective ones (global and project files, then the
// per-model overrides of the session's model — the model whose window the
// compaction protects; the summarizer's when the session names none — then
// the caller's flags, which win over everything). The summarizer is, in
// order: the model the request names, compaction.model, the session's
// current model (the last model change or assistant message on the path);
// or none when the request is offline, and the summary is built by code.
// Models come from the registry (built-in list and models.json); choosing
// one needs no key, so a dry run works without one, and a key is looked up
// only when the model is about to be asked.
//
// A context window given with the request replaces the window of every
// model involved: it bounds the summary request (the never-stuck budget),
// sets a branch summary's budget, and is what the automatic-compaction
// threshold (window less reserveTokens) is reported against. Without one,
// the session's model's window is used, else the summarizer's, else
// compaction.DefaultContextWindow (pi's figure for an unknown model); with
// an offline request none is needed.
//
// The compaction entry is appended as a child of the leaf it was prepared
// for (session.AppendAt), with the user's instructions (trimmed), the
// requests' usage and the system state in force at the leaf (its
// systemMessage, stamped with the entry's time). TokensAfter is the rebuilt
// context's size by chars/4 alone: the usage of every assistant message on
// the path measured the context before the compaction.
//
// # Writing nothing on failure
//
// An agent made with [Load] reads the file read-only; the file is opened for
// appending only at the moment the one entry of an operation is written,
// after the model has answered. So a failed or cancelled operation (a
// cancelled ctx: Ctrl-C) leaves the file byte for byte as it was, and the
// append goes through the session's lock after reading whatever other
// processes appended meanwhile. A file in format version 1 or 2 cannot take
// version-3 entries: it is migrated (atomically, the original kept as
// FILE.bak) at that moment, and the result says so; migration ids are
// derived from the file, so the ids the operation planned with stay valid.
//
// # Navigation
//
// Navigating from an entry (by default the current leaf) to a target:
// compaction.CollectBranch finds the branch being left,
// compaction.NewLeaf where the leaf goes (a user message target moves it to
// the message's parent and hands the text back for editing), and
// compaction.PrepareBranch what fits the summarizer's budget (its window
// less branchSummary.reserveTokens). With a summary asked for and messages
// to summarize, a branch_summary entry whose fromId is the entry navigated
// from (the spec's meaning; pi stores the new position) is appended as a
// child of the new leaf, and becomes the leaf.
//
// A label (NavigateRequest.Label, or a hook's) is appended after that, as
// a label entry for the summary entry, or without a summary for the
// target, at the new leaf; it becomes the leaf (pi's navigateTree, §5.1
// steps 7–8).
//
// Without a summary or a label nothing is written, and that is a decision:
// a session file has no record of "the leaf moved". As in pi
// (pi-reference §1.6), the leaf after loading is the last entry appended,
// so only an append makes a move survive. The agent's session moves its leaf in memory (the next
// entry appended in this process continues from there: the TUI's case); a
// one-shot command has nothing to keep, and says so. A target that is the
// entry navigated from does nothing; a branch with no message to summarize
// gets no summary entry (compaction's ErrNothingToSummarize, reported in
// NavigationResult.NotSummarized) and is navigated like one without.
//
// # Hooks
//
// [Config].Hooks is a hook.Runner (hook.New: the command hooks of the
// settings and any in-process handlers; nil for none). Both operations
// dispatch its events at fixed points, always through the runner, so the
// commands, the TUI and an embedding program see the same behaviour:
//
//   - session_before_compact ([Agent.RunCompaction]) after the plan, with
//     the preparation, the path as branchEntries, the instructions, the
//     reason and willRetry (reason overflow). A cancel writes nothing and
//     returns a *CancelledError whose Hook names the handler (Cause
//     [ErrHookCancelled]); transformed message arrays are what the
//     summarizer gets; a valid compaction a handler supplies is appended
//     with fromHook true and no model is asked;
//   - session_compact after the append and the rebuilt context, with the
//     entry exactly as written;
//   - session_compact_failed whenever a compaction (after its plan) ends
//     without writing: a failure, Ctrl-C, or a hook's cancel (aborted for
//     the last two; fromExtension when a hook cancelled, or supplied the
//     compaction that could not be stored). "Nothing to compact" is an
//     outcome of the plan, not a failure, and fires nothing;
//   - session_before_tree ([Agent.RunNavigation]) on every navigation that
//     moves, summary asked for or not (as in pi; a target that is where the
//     navigation starts fires nothing). A cancel leaves the leaf and the
//     file as they were; a handler's summary is used only when the user
//     asked for one (fromHook true); its instructions replace the user's
//     for Prime's summary; a label, the user's or a handler's, is appended
//     as a label entry after the summary (for the summary entry) or, with
//     no summary, for the target at the new leaf, and becomes the leaf, as
//     pi's navigateTree does;
//   - session_tree after the appends or the move.
//
// Model resolution and hooks: the summarizer's provider (the API key) is
// resolved before the before-event. When no handler of that event exists,
// a model that cannot be used fails at once, before anything starts (as in
// pi). When one exists, the failure waits: the handler runs, and the
// operation fails with the model error only if no handler supplied the
// summary. So a hook that writes summaries makes a key unnecessary, and a
// hook that only reshapes the input still learns of the attempt through
// session_compact_failed.
//
// Handlers that fail, time out or answer invalidly are reported as
// EventHookReport events as each dispatch ends; the hooks skipped for an
// operation's events (an untrusted project, --no-hooks, an unknown event)
// are reported the same way when it starts. EventHooks announces the
// handlers about to run, so that a slow hook is visible. Command hooks get
// the session file (PRIME_SESSION_FILE, absolute), the session id
// (PRIME_SESSION_ID) and the entry the operation starts from
// (PRIME_LEAF_ID) in their environment. After-events are dispatched even
// after Ctrl-C, with at most a few seconds for their handlers.
package agent
