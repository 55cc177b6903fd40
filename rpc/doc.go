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
// character), and a last line without a newline still counts. A line may be
// up to MaxLineBytes (32 MiB) long; a longer one is answered with a parse
// failure naming its size and skipped, read through in bounded pieces.
// Bytes that are not UTF-8 become U+FFFD, as they do for JavaScript's
// decoder; empty lines are skipped. Output is one compact JSON
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
// pi's members and data: prompt, steer, follow_up,
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
// # Order, events and shutdown
//
// Commands start one at a time, in the order they arrive; compact,
// navigate_tree and bash go on in the background and are answered when
// they end. Events are the agent's, in its order, each written as
// agentjson.MarshalEvent gives pi's form. At the end of input the work
// under way is finished (with Options.AbortAtEOF, aborted as pi does);
// when the context is cancelled the agent is aborted and Serve returns the
// context's error. docs/rpc.md gives the order, the shutdown and Prime's
// additions to pi's protocol (navigate_tree, pins, uncompact, compaction
// receipts, contextUsage) in full.
package rpc
