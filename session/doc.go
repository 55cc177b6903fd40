// Package session reads and writes Prime's (and pi's) session files: every
// conversation is a tree of entries in an append-only JSONL file.
//
// # The file
//
// A session file is UTF-8 JSONL: one JSON object per line, each line ended
// by "\n", written compactly with keys in the order shown (pi writes them
// with JSON.stringify; Prime writes the same bytes). The first line is the
// header, which is not part of the tree:
//
//	{"type":"session","version":3,"id":"<uuid>","timestamp":"<ISO>","cwd":"<dir>","parentSession":"<path>"?}
//
// Every other line is an entry. Entries share four leading members, then
// carry their own:
//
//	{"type":"message","id":"1a2b3c4d","parentId":"0f9e8d7c","timestamp":"2025-12-03T14:00:00.000Z","message":{...}}
//
// The common members are:
//
//   - id: eight lowercase hex digits, unique in the file (drawn again on a
//     collision; a whole UUID after 100 collisions).
//   - parentId: the entry that was the leaf when this one was appended, or
//     null for a root.
//   - timestamp: ISO-8601 UTC with milliseconds. Messages carry their own
//     numeric timestamp in Unix milliseconds.
//
// The entry types, with the members after the common four, are
//
//	message                message: a system, user, assistant, toolResult, bashExecution or custom message
//	thinking_level_change  thinkingLevel
//	model_change           provider, modelId
//	compaction             summary, firstKeptEntryId, tokensBefore, details?, fromHook, customInstructions?, usage?, systemMessage?
//	branch_summary         fromId, summary, details?, fromHook, usage?
//	custom                 customType, data?            (extension state; never reaches the model)
//	custom_message         customType, content, display, details?   (reaches the model, even hidden)
//	context_edit           targetId, replacement        (null, or {content}: hides or replaces an earlier entry's content)
//	label                  targetId, label?             (an absent label clears it)
//	session_info           name?
//
// pi 1.6 keeps the system prompt in the transcript: a system message
// ({"role":"system","content","sections"?,"toolsAdded"?,"toolsRemoved"?,
// "timestamp"}, see [SystemMessage]) holds the prompt's named sections and
// the tool declarations, later ones patch them, and a compaction carries
// their replayed state in systemMessage. A failed attempt (a retried error,
// an overflow or a cut-off reply, with its tool results) stays in the file
// and is hidden from the model by context_edit entries.
//
// See [Payload] and the *Entry types for the Go forms. An entry of a type
// Prime does not know, and members it does not know, are kept byte for byte:
// a version-3 file loaded and written back ([Session.Bytes]) is identical.
//
// # The tree
//
// parentId links make a tree (a forest, strictly). The leaf is the entry
// the next append attaches to: after loading, the last entry in file order.
// Moving it ([Session.SetLeaf]) starts a branch; the move itself is not
// written, as in pi, so only what was appended survives a reload.
//
//	a1 ── a2 ── a3 ── a4 ── a5            a1 user        a4 user (first try)
//	             │                        a2 assistant   a5 assistant
//	             └── b1 ── b2 ── b3       a3 toolResult  b1 branch_summary (fromId a5)
//	                              ▲                      b2 user (second try)
//	                             leaf                    b3 assistant
//
//	lines: header, a1, a2, a3, a4, a5, b1, b2, b3   (file order = append order)
//	path(b3) = a1 a2 a3 b1 b2 b3                     (root → leaf, what BuildContext reads)
//
// Each entry without children ends one branch ([Session.Leaves]): "prime
// session info" reports the number of leaves as the number of branches, and
// the entries with more than one child as branch points. Children are
// ordered by timestamp, then file order, as pi's tree shows them.
//
// Labels bookmark entries: the last label entry for a target wins and an
// empty one clears it. The session's name is the last session_info entry's
// (an empty name clears it). An entry whose parent is not in the file is an
// orphan: like pi, Prime treats it as a root, so paths through it stop
// there ([Session.Orphans]).
//
// # What the model sees
//
// [BuildContext] turns a root→leaf path into messages exactly as pi 1.6's
// buildSessionProjection does: after the latest compaction (its system
// state, then its summary) come the entries it kept, except system
// messages, and every entry after it; the latest context_edit of an entry
// hides it or replaces its content; older compactions in the kept range
// add nothing. [Context.Projection] lists every entry of that projection
// with the messages it gives, which is what compactions cut. [ToLLM]
// turns the messages into provider messages, with Prime's own words around
// summaries, and leaves the system messages out: a request carries their
// replayed state instead ([Context.System], its [SystemMessage.Prompt], and
// [Context.Tools]).
//
// [EstimateTokens] and [EstimateContextTokens] count tokens as pi does
// (system messages by their content, sections and the JSON of their tool
// declarations); [Context.EstimateNext] is pi 1.6's estimate of the next
// request, which distrusts usage from before the latest context edit or
// compaction and then counts the replayed system state once.
// [Session.Context] with an id that is not in the session falls back to the
// last entry, as pi's does; the "prime session context --leaf" command
// rejects such an id instead, since there it is a typo.
//
// # Versions and migration
//
// Versions 1 and 2 load, migrated in memory; nothing is written unless asked
// ([Migrate], "prime session migrate", or [Open], which cannot append
// version-3 entries to an older file):
//
//   - v1 → v2: entries get ids and form one chain in file order. A
//     compaction's firstKeptEntryIndex (counting the file's JSON objects,
//     the header being 0) becomes the firstKeptEntryId of that entry; an
//     index naming the header or no entry leaves it unset, as in pi.
//     Migrated lines are written with the four common members first, then
//     the others in their original order, firstKeptEntryId taking the place
//     of firstKeptEntryIndex.
//   - v2 → v3: the message role hookMessage becomes custom.
//
// pi gives migrated entries random ids, so the same file gets different ids
// each time it is read. Prime derives them ([MigrationID]): the first eight
// hex digits of SHA-256 over the session id, a zero byte and the entry's
// position; the same file always gets the same ids, so read-only commands are
// repeatable and a later [Migrate] writes the ids already shown. The
// rewrite is atomic (temporary file, fsync, rename, directory fsync) and the
// original is kept as FILE.bak; lines the loader could not read are carried
// over unchanged.
//
// # Bad input
//
// Problems that do not stop loading are [Warning] values with line numbers:
//
//   - a line that is not JSON, or not an object with a string "type", is
//     skipped, as pi skips it (lines before the header too);
//   - a last line that is incomplete and has no newline is a torn tail, the
//     mark of a crash mid-append: it is skipped and reported, kept in the
//     file (nothing is deleted), and the next append starts on a fresh line
//     so the two are never glued; from then on it is an ordinary malformed
//     line;
//   - entries sharing an id: lookups find the later one (pi's rule);
//   - an entry without an id is kept (its path works) but cannot be looked
//     up or be a parent;
//   - parent links forming a cycle (pi would loop forever): the entry of the
//     cycle that comes first in the file becomes a root;
//   - a header version newer than 3: read as version 3; Open refuses to
//     append;
//   - a second session header in the middle of the file (two files joined):
//     kept as an entry the model never sees ([WarnSecondHeader]).
//
// A file that is empty, or whose first JSON line is not a header with a
// string id, is not a session: a [*NotSessionError] naming the file, and
// the file is never written. An entry with a field of the wrong type (a
// compaction whose summary is a number) is read as pi reads it, with
// JavaScript's conversions where pi uses the field, and a [WarnCoerced]
// warning naming the line and the field once it has been decoded; one that
// cannot be read even so (a role pi does not write is fine: it becomes an
// [UnknownMessage]) stays in the tree but is left out of the context, with
// a [WarnUnreadable] warning. A context edit pi cannot apply still fails
// the context, naming its line. [Check] reads every entry and lists every
// problem; [Repair] rewrites the file with the coerced fields written out
// and unreadable lines dropped, keeping a .bak.
//
// # Writing
//
// A [Session] from [Open] or [Create] appends: each entry is one line,
// written with a single write on a file opened O_APPEND, under an exclusive
// advisory lock (flock; none where the system lacks it). Before writing, it
// checks that the file is still the one it read, indexes whatever other
// processes appended since (the leaf stays where it was), and if the file
// does not end in a newline it writes one first. Appends are not fsynced:
// they survive a killed process, not a power cut. An append that fails part
// way is cut back to the last whole line while the lock is held.
// [Options.Write] lets a test inject such faults at any write.
//
// An entry Prime makes is written as pi writes the same entry: raw values
// (tool-call arguments, details, what is kept verbatim) as they are, a lone
// surrogate included in the escape JSON.stringify writes for it, and a
// compaction's system message with the entry's time as its timestamp.
//
// A new session is written when its first user or assistant message is
// appended (pi 1.6's rule): the header and every entry so far in one write,
// to a file created exclusively (mode 0600, directories 0700), so there is
// never a second header. [Session.Flush] writes it earlier.
//
// [Session.Fork] starts a new session from one conversation of a session:
// the path to an entry, with label entries moved after it, every other
// entry byte for byte, and the source recorded as the parent session
// ("prime session fork").
//
// Sessions live in ~/.prime/agent/sessions/--<cwd encoded>--/ (the agent
// directory moves with PRIME_CODING_AGENT_DIR; the settings package's
// SessionsDir builds the folder's path), named <ISO time with ':' and '.' as '-'>_<UUID
// v7>.jsonl ([FileName], [NewSessionID]). [List] and [MostRecent] find them.
//
// # Memory and change
//
// A session holds an index of its file (about 56 bytes an entry), never the
// file's bytes: an entry's line is read back when its payload is asked for
// and checked against the CRC-32C it was indexed with. [*Entry] values and
// the messages decoded from them are shared and immutable: do not modify
// them. With [ReadOptions.IndexDir], the index of a large file is kept from
// one run to the next and checked against the file before it is used; a
// damaged or stale one is dropped with a [Warning] (WarnIndex).
//
// A session file only grows. Any other change made behind the session's
// back (truncated, replaced, rewritten) is [ErrFileChanged]: no read or
// append treats the new bytes as the ones indexed.
//
// How the index, its cache and the reading in parallel work, and why, is
// in docs/session.md. The engine is the files named index*.go; every use
// of package unsafe and every memory map is in session/internal/rawmem,
// whose doc states the invariant each one relies on.
package session
