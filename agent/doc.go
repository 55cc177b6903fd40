// Package agent runs a session: it is the one place that brings together
// the session file, the model-tools loop, compaction, the settings, the
// models, the tools and the extension hooks. Every front end (the TUI,
// print and JSON modes, RPC mode, "prime compact" and "prime branch")
// calls the same methods and reads the same events, so all behave the same.
//
//	ag := agent.New(s, agent.Config{Settings: st, Model: "anthropic/claude-haiku-4-5", Events: show})
//	if _, err := ag.Prompt(ctx, "explain main.go", agent.PromptOptions{}); err != nil { ... }
//	err := ag.Wait(ctx) // the run, its retries and compactions, are over
//
//	res, err := ag.Compact(ctx, agent.CompactRequest{Instructions: "focus on the parser"})
//	// errors.Is(err, compaction.ErrNothingToCompact / ErrAlreadyCompacted): an outcome, not a failure
//	// errors.Is(err, agent.ErrCancelled): Ctrl-C or a hook's cancel; nothing was written
//	// errors.As(err, &modelErr): no model, unknown model, or no API key
//
// It provides:
//
//   - the conversation ([Agent.Prompt], [Agent.Steer], [Agent.FollowUp],
//     [Agent.Abort], [Agent.Wait]), with automatic retries and compaction
//     before a prompt, between turns and after a run;
//   - manual compaction ([Agent.Compact], or [Agent.PlanCompaction] for a
//     dry run followed by [Agent.RunCompaction]);
//   - tree navigation with an optional summary of the branch left
//     ([Agent.Navigate], or [Agent.PlanNavigation] and
//     [Agent.RunNavigation]);
//   - models and thinking levels, sessions (new, switch, fork, clone), the
//     user's own shell commands ([Agent.RunBash]);
//   - what survives compaction and what it costs: pins ([Agent.Pin]), the
//     summary written in the background ([Agent.BackgroundSummary]), the
//     receipt ([Agent.Receipt]), undoing one ([Agent.Uncompact]), and what
//     fills the context ([Agent.ContextBreakdown]).
//
// [Config].Events hears everything as it happens, as one typed stream (see
// [Event]); package agentjson gives pi's JSON form of each event.
// [Config].Hooks runs the extension events (session_before_compact,
// session_compact, session_compact_failed, session_before_tree,
// session_tree) at fixed points of both operations.
//
// Every message is appended to the session the moment it ends, and each
// request is built from the session's current path: what the model sees is
// what the file says. An agent made with [Load] opens its file for
// appending only when an operation writes its one entry, so a failed or
// cancelled operation leaves the file byte for byte as it was.
//
// docs/agent.md gives the order of a run, the decisions where Prime
// differs from pi, and what each operation writes.
package agent
