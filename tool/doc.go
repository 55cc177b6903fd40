// Package tool provides the tools a coding agent's model calls to work in a
// directory: read, write, edit, bash, grep, find and ls ([Builtins]), the
// selection of them a --tools list makes ([Select]), and the validation of
// a call's arguments against a tool's schema ([Validate]).
//
// A tool is a value with a [Spec] (its name, description and JSON Schema,
// which the model sees, and the lines it adds to the system prompt) and a Run
// method. Tools know nothing of sessions or of the model: the agent loop
// repairs a call's arguments ([ArgPreparer]), validates them, runs the call,
// and turns the [Result] (or the error) into a tool result message.
//
// Invariants every tool keeps:
//   - output for the model is bounded (by lines and bytes, see [MaxLines] and
//     [MaxBytes]); what is cut is said in a notice telling the model how to
//     read on, and for bash the whole output is kept in a temporary file the
//     notice names;
//   - Run honours ctx: a cancelled call stops promptly (bash kills its whole
//     process group, walks check ctx per directory and file) and returns an
//     error matching [ErrAborted] whose text says it was aborted;
//   - relative paths are resolved against the directory the tools were made
//     for ([Env].CWD), never the process's; ~, a leading @, Unicode spaces
//     and file:// URLs are understood;
//   - a Run leaves no goroutine or process behind: bash waits for its shell,
//     and stops reading output that processes left in the background keep
//     open once it has been quiet for 100 ms (2 s at most);
//   - a file that edit or write replaces is replaced atomically (temporary
//     file and rename, mode kept, symbolic links resolved first), so a crash
//     leaves the old content or the new, never a mix;
//   - output is deterministic: grep and find walk directories in sorted
//     order, ls sorts case-insensitively.
//
// The parameter names and schemas are pi's, which models are trained on;
// every description, notice and error text is Prime's own (golden files in
// testdata pin them).
//
// # Where Prime differs from pi, and why
//
//   - grep and find are implemented in Go, not by running ripgrep and fd:
//     Prime must not download binaries. The walk respects .gitignore files
//     (nested ones, negation, directory and anchored patterns) whether or
//     not the directory is a git repository, plus .git/info/exclude; it does
//     not read the global git excludes file or .ignore/.rgignore files.
//     Symbolic links are not followed. Regular expressions are Go's (RE2),
//     close to ripgrep's. Results come in sorted order where ripgrep's vary
//     from run to run.
//   - read does not resize images (that needs an image library for WebP and
//     BMP and a resampler; the providers scale images themselves) and tells
//     a binary file from text instead of showing it decoded as garbage. It
//     counts the empty piece after a final newline as a line, as pi does,
//     but does not offer to "read on" into it.
//   - bash runs commands with the process environment, less the secrets
//     [Env].Secrets removes (API keys, tokens, AWS_*), plus [Env].Environ
//     (Prime's own variables are the caller's business); once the shell has
//     exited, output that background processes keep writing is read for at
//     most 2 s, where pi waits for the timeout.
//   - edit and write replace files atomically where pi writes in place.
//   - ls lists an entry it cannot stat (a broken link) instead of hiding it.
//   - Validate's coercions are pi's for the schemas Prime's tools use, a
//     little stricter: an empty string is not the number 0, and true is not
//     the number 1.
package tool
