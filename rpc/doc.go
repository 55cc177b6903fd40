// Package rpc is Prime's RPC mode (prime --mode rpc): pi's JSON-lines
// protocol, so that an editor, a bot or a test harness written for
// pi --mode rpc drives Prime unchanged.
//
//	srv := rpc.New(os.Stdout, rpc.Options{Stderr: os.Stderr})
//	ag := agent.New(sess, agent.Config{..., Events: srv.Event})
//	err := srv.Serve(ctx, ag, os.Stdin)
//
// # Framing
//
// Input is one JSON object per line: lines end with LF, a CR before it is
// dropped, nothing else separates them (U+2028 inside a string is just a
// character), a line may be of any length, and a last line without a newline
// still counts. Bytes that are not UTF-8 become U+FFFD, as they do for
// JavaScript's decoder; empty lines are skipped. Output is one compact JSON
// object per line, LF-terminated and valid UTF-8, written whole (lines never
// interleave) and nothing else: diagnostics go to Options.Stderr, a line
// each. A client that does not read its output holds the agent back rather
// than lose lines; a client that has gone (a failed write) ends the server
// as the end of input does, and Serve returns the write's error.
//
// # Commands and responses
//
// A command is {"type": NAME, "id"?: ANY, ...members}. Its response is
//
//	{"id"?, "type":"response", "command": NAME, "success": true, "data"?: ...}
//	{"id"?, "type":"response", "command": NAME, "success": false, "error": TEXT}
//
// with the command's id echoed as it was sent (any JSON value; absent when
// the command had none). Every command of pi 1.6's protocol is handled, with
// pi's members and data (pi-agent-reference §5.3): prompt, steer, follow_up,
// abort, clear_queue, new_session, get_state, get_messages, set_model,
// cycle_model, get_available_models, set_thinking_level,
// cycle_thinking_level, get_available_thinking_levels, set_steering_mode,
// set_follow_up_mode, compact, set_auto_compaction, set_auto_retry,
// abort_retry, bash, abort_bash, get_session_stats, export_html,
// switch_session, fork, clone, get_fork_messages, get_entries, get_tree,
// get_last_assistant_text, set_session_name, get_commands.
//
// Bad input never stops the server and never writes to the session:
//
//   - a line that is not one JSON object, or whose "type" is missing or not
//     a string: {"command":"parse","success":false,"error":"Failed to parse
//     command: ..."} (with the id, when one could be read);
//   - an unknown type: "Unknown command: NAME";
//   - a member missing or of the wrong type ("message" a number, a mode
//     that is neither "all" nor "one-at-a-time", an image that is not
//     base64): a failure naming the member and what it must be; nothing of
//     the command is done. Members the command does not know are ignored;
//     null is the same as absent;
//   - what the agent refuses (a prompt while it works, without
//     streamingBehavior; an entry that does not exist; a compaction with
//     nothing to compact): a failure with the agent's reason.
//
// # Order
//
// Commands are started one at a time, in the order they arrive, so each
// finds the effects of those before it: a prompt after new_session goes to
// the new session, a prompt after compact finds the compaction under way
// (and is refused), a command after abort finds the agent idle. Most
// commands are answered before the next is started. Three go on in the
// background while the next ones are read and handled, and are answered
// when they end: compact, navigate_tree and bash. abort is answered once
// the agent is idle and the compaction or navigation it stopped has
// answered. The response to a prompt (and to a steer or follow_up that
// starts a run) comes before every event of the run it starts: it is
// written the moment the agent accepts the message. A compaction's response
// follows its compaction_end.
//
// Events are the agent's, in the order the agent emits them, each written
// as agent.MarshalEvent gives pi's form (message_update delta-only, as pi's
// RPC and JSON modes write it). Events pi has no line for are left out; the
// agent's notices and hooks' failures go to Options.Stderr.
//
// # Shutdown
//
// At the end of input the commands read so far are started, then the agent
// is aborted (the run, a compaction or navigation, a user command, even one
// that began after the abort), Serve waits until everything the commands
// started has ended and answered, and returns nil (prime exits 0). When its context is cancelled (prime: the
// first SIGTERM, SIGHUP or SIGINT) it does the same without starting
// anything more: commands still arriving are answered with a failure ("the
// agent is shutting down"), and Serve returns the context's error (prime
// exits 143, 129 or 130; a second signal exits at once). What the session
// file holds is then complete: every entry is appended whole, an aborted
// reply and the results of aborted tool calls included.
//
// # Where Prime differs from pi
//
// Additions a pi client never sees unless it asks:
//
//   - navigate_tree {targetId, summarize?, customInstructions?,
//     replaceInstructions?, label?} moves the session's leaf as pi's /tree
//     does (pi's protocol has no such command): it answers {editorText,
//     cancelled, summaryEntry?} (aborted: true when it was aborted), emits
//     branch_summary_start and branch_summary_end around a summary, and is
//     refused while the agent is busy;
//   - get_state also carries contextUsage, as get_session_stats does;
//     get_session_stats also carries contextBreakdown, what fills the
//     context (agent.ContextBreakdown: parts [{kind, tokens}] by kind,
//     total, estimate, window, threshold, backgroundMark, and compaction
//     {firstKeptEntryId, summarizeMessages, summarizeTokens, keepMessages,
//     keepTokens, isSplitTurn}, what a compaction now would cut and keep,
//     or null with notCompactable saying why; leafId, windowSource);
//   - pin {text} or pin {entryId} pins a text, or the text of a message,
//     on the current branch: the model sees it word for word after any
//     number of compactions, until unpinned. It answers {pin: {id, text,
//     messageId?, timestamp}} (id is the pin's entry). unpin {pinId} or
//     unpin {text} removes one and answers {pin} with it; get_pins answers
//     {pins: [...]}, oldest first. (The members are pinId and entryId
//     because id is the command's own.) Both emit pins_changed;
//   - uncompact {compactionId?} undoes a compaction (the latest on the
//     path when absent): the conversation goes back to the entry before it,
//     durably (a custom entry pi ignores is appended there), and the model
//     sees the whole history again; the compaction and what followed it
//     stay on a side branch. A run, compaction or navigation under way is
//     aborted first and answered before it (an id that is no compaction of
//     the session, or a path without one, is refused before anything is
//     aborted). The pins in force stay in force (pin entries made since the
//     compaction are appended again below the undo). It answers {compactionId,
//     entryId, leafId, left, messages, tokens, contextWindow?} (leafId: the
//     entry the conversation continues from; left: the entries made after
//     the compaction, left on its branch) and emits compaction_undone with
//     the same members;
//   - get_compaction_receipt {compactionId?} answers what a compaction did
//     (the latest on the path when absent): {entryId, tokensBefore,
//     instructions?, fromHook, deterministic, deterministicReason?, usage?,
//     receipt?, ledgerCheck?}, receipt and ledgerCheck as Prime records
//     them in the entry's details (reason, model, tokensBefore,
//     tokensAfter, messages, durationMs, background, waitMs, updated,
//     plannedAt; bound, summaryTokens, repairedTokens, checked, kept,
//     repaired, unfit), absent for a compaction pi or a hook made;
//   - events of Prime's own, which a pi client can ignore:
//     branch_summary_start and branch_summary_end around a branch summary;
//     background_compaction {kind, leafId, firstKeptEntryId, summarizer?,
//     usage?, errorMessage?, why?} as a summary written in the background
//     before the threshold is started, ready, failed, cancelled, overtaken
//     (why says how), used or updated (appended at the threshold, after an
//     update request for the latter); pins_changed {pins} after a pin or an
//     unpin; compaction_undone after uncompact.
//
// Where Prime's behaviour differs, by decision:
//
//   - Two prompts that arrive together are both kept: the second is queued
//     as a follow-up (pi starts both and loses the second's message).
//   - steer and follow_up while the agent is idle start a run with the
//     message (disposition "started"; DESIGN decision 7): pi queues it until
//     the next prompt.
//   - After a signal, a command still arriving while the agent stops gets a
//     failure response instead of being dropped.
//   - Models are sent without their HTTP headers, which may hold keys.
//   - export_html answers that it is not supported; get_commands lists no
//     commands, since Prime has no extension commands, prompt templates or
//     skills; new_session, switch_session, fork and clone never answer
//     cancelled, since no hook of Prime's can cancel them; there are no
//     extension_ui_request lines.
//   - Error texts are Prime's own words, except the framing ones clients
//     match: "Failed to parse command: ", "Unknown command: ", "Model not
//     found: " and "Entry not found: ".
package rpc
