// Package mcp connects Prime to Model Context Protocol servers and offers
// their tools to the model, using the official Go SDK.
//
// Configuration follows pi 1.6's mcp.json: an "mcpServers" object in the
// user's ~/.prime/agent/mcp.json and in the project's .prime/mcp.json (read
// only when the project is trusted, since an entry runs a command). A
// command selects a stdio server (command, args, env, cwd), a url a
// streamable HTTP one (url, headers); ${VAR} and ${VAR:-default} in env,
// header, command, args and url values are the environment variable's
// value (Claude Code's .mcp.json expands all five; pi only env and
// headers, and a pi file has ${…} nowhere else), and a whole value "!command" the
// command's output when the server connects (command.go); enabled: false keeps an entry without
// connecting to it; timeout bounds each request, in seconds. A project
// entry replaces the user's entry of its name, and one holding no command,
// url or type changes only enabled. Entries that cannot be used are
// reported and skipped; the others still connect.
//
// A [Manager] connects the enabled servers in the background and never
// makes a caller wait for them, except a call to a server's tool, which
// waits for its server (a server that failed or stopped is started again
// by the next call). Closing it stops every server: a stdio server's input
// is closed, then it is sent SIGTERM and SIGKILL, and its process group is
// killed, which reaches the children of wrappers like npx.
//
// Tools are named mcp__server__tool, as pi names them, so that permission
// rules can name them. Their input schemas reach the model as the server
// gave them. Results become ordinary tool results: text joined, images as
// images, embedded resources as text (binary ones saved to a file), an
// error result when the server says isError; text over 20 KB loses its
// middle, the whole saved to a file the result names. A progress
// notification for a call starts its timeout again. The servers' log
// messages (info and above) go to Options.LogFile (the agent's mcp.log),
// each cut to 8 KB.
//
// A server cannot make Prime hold without bound what it sends: one message
// (a stdio line, an HTTP response body, a server-sent event) is at most
// [MaxMessageBytes], 32 MB, which holds a result of some 20 MB of images;
// reading one costs up to about three times that while it is decoded. A
// server past it, or one writing output that is not JSON-RPC, is
// disconnected (killed, for stdio) with an error naming it and what it did,
// and the next call starts it again; the other servers go on. Prime stops
// reading a stdio server that has 256 requests awaiting answers it does not
// read (its call then ends at the timeout), and kills one whose session
// does not close within 8 s. A server that stops during a call fails the
// call with how it ended (its exit status or signal) and the end of its
// stderr.
//
// Where Prime does differently from pi, and why:
//   - Every tool offered is declared to the model directly (pi's "direct"
//     exposure). pi's default, codemode, needs a script runtime Prime does
//     not have, and deferred a tool search: tools with those exposures are
//     declared directly, and an entry that names them says so in a
//     warning. "hidden" (the entry's exposure, or a tool's in toolExposure,
//     exact names before patterns, the first pattern that matches) keeps a
//     tool from the model, as in pi (exposure.go).
//   - A tool whose input schema is not an object schema Prime can read is
//     left out and reported, rather than sent: a provider refuses the
//     whole request for one bad schema, which would stop the conversation.
//   - Tool names over 64 characters are shortened with a hash of the
//     tool's name, since providers refuse longer names.
//   - OAuth sign-in and resources are not supported yet.
package mcp
