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
// # Reading: memory and speed
//
// A session holds an index of its file, never the file's bytes: opening a
// 1.3 GB session costs the index, not the file. The index keeps, for each
// entry, a 48-byte record: where its line is (offset and length), the
// line's CRC-32C, its line number, the index of its parent, its id and
// parent id as numbers (pi and Prime write eight hex digits), its
// timestamp in milliseconds, its type and (for a message) its role, and
// where its common members end; strings a record cannot hold (an id of
// another form, a timestamp not in toISOString's form, a type Prime does
// not know) go to a side table. The ids are also kept as one sorted array
// (8 bytes an entry), and the session's labels, name, orphans and warnings
// beside them: about 56 bytes an entry in all.
//
// [*Entry] values are made from the index when asked for, 64 at a time
// into one array that the session holds weakly: an entry is the same
// *Entry for as long as anyone holds it, and costs nothing once nobody
// does. An entry's line is read back from the file (ReadAt) when its
// payload, its message or its bytes are asked for, checked against its
// CRC-32C, and not kept: what is decoded from it is what stays in memory.
// [BuildContext] reads the lines of the entries it decodes in runs (lines
// at most 4 KB apart in one read of at most 8 MB) and decodes each message
// in one pass over its bytes for the three provider roles in the shapes
// pi and Prime write (anything else, system messages and down to a lone
// surrogate, goes to the general decoder, which decides; FuzzFastDecode
// checks the two agree), on every core when a context has many. What is
// decoded shares the bytes read instead of copying them: every string that
// needs no unescaping, and tool-call arguments already in JSON.stringify's
// form; strings with escapes are decoded into blocks of their own. So a
// decoded context costs its text, once. [DecodeMessage], which reads a
// caller's buffer, copies.
//
// An entry remembers the message decoded from it while something still
// uses it, so building a context and then preparing a compaction of it
// decode each message once; decoded messages are therefore shared and
// must not be modified. The entry holds only a weak reference: a message
// nothing uses any more is collected, and a long session does not keep its
// compacted history decoded. (A context's messages are allocated in arrays
// of up to 64 per role and remembered per array, which is cheaper than a
// weak reference per message; an array lives while any of its messages
// does.) The session itself keeps the messages of the last context it
// built ([Session.Context]): a session the agent keeps open for a long run
// holds its index and the conversation it sends, nothing more; each turn
// reads and decodes only the entries appended since.
//
// Paths are walked through the records' parent indices. [Session.Context]
// and [PathView] (from [Session.LeafView] and [Session.ViewOf]) work on the
// path's indices and make only the entries they need: the latest
// compaction, what it kept and what follows it, and the entries that set
// the thinking level and the model; a []*Entry path ([Session.Path],
// [Session.LeafPath]) makes an entry for each of its entries. The last
// path of each kind is remembered and extended by one entry when asked for
// again after an append at its end (the []*Entry one while its caller
// holds it).
//
// Writing a session back byte for byte ([Session.Bytes], [Session.Fork],
// [Migrate]) reads its lines back from the file. A fork is assembled in
// memory before it is written (its own size, not the source's), and a file
// in an older format version is read whole and migrated in memory, where
// its session then keeps the migrated lines. A session parsed from a
// buffer ([Parse]) keeps that buffer, and one kept in memory keeps its
// lines.
//
// The index pass reads the file in blocks of 1 MiB, on every core: each
// core reads the next block with ReadAt into a buffer of its own and
// indexes the lines that start in it, reading on past the block's end for
// its last line, so opening holds a buffer or two per core whatever the
// file's size. It validates every line as JSON (what JSON.parse accepts:
// invalid UTF-8, lone surrogates and repeated names included) and reads
// the four common members; pi and Prime write them first, so a byte-level
// fast path reads them, and any other shape goes through the JSON
// tokenizer. Label and session_info lines are decoded while they are at
// hand. FuzzScanLines checks the pass, cut into blocks of a few bytes,
// against reading the lines one by one.
//
// # The persistent index
//
// Indexing validates every byte, which for a large file is most of the
// cost of opening it. So for a file of 4 MiB or more, when [ReadOptions]
// name a directory ([IndexDir]: the agent and "prime" keep it in the agent
// directory's cache), the index is written to a file of its own there
// after the file was indexed, and read instead the next time; the lines
// appended since are indexed as usual. The index file holds the records,
// the sorted ids, the header line, the labels, name, orphans and warnings,
// what the file was when it was indexed (device, inode, size, modification
// and change times, and when those were taken: its stamp), and a CRC-32C
// of every 1 MiB block of the part indexed. It is never trusted blindly:
//
//   - it must be whole: its byte order and version, its size and a
//     CRC-32C over all of it; every record must lie within the part
//     indexed and link within the index, and every id must be its
//     record's: a damaged index is never followed;
//   - it must be of this file: the same absolute path, device and inode,
//     and a file at least as long as the part indexed;
//   - the part indexed must be unchanged: when the file's stamp is the one
//     recorded, and the file had last changed long enough before it was
//     taken that a later change would show in it (30 ms on a file system
//     that keeps fine times, 2 s on one that keeps seconds), the stamp
//     vouches for it; otherwise (the file grew, was touched, or changed
//     too soon before the stamp) every block is read again and checked
//     against its CRC-32C, on every core.
//
// Failing any of these, the file is indexed afresh and the index file
// replaced. It is replaced too whenever the stamp did not vouch for it or
// lines were appended, and a session that appended writes it when it is
// closed (first waiting, at most the margin above, for the stamp to be
// able to vouch for the file), so resuming a long session reads its index
// and trusts it. Index files are written aside and renamed over, never
// synced: a torn one fails its checksum. On systems that do not say a
// file's inode and change time (other than Linux), no index is kept.
//
// Invariants: the index describes the file's bytes [0, indexed) exactly,
// and nothing after; every line read back is the line indexed, checked by
// its CRC-32C; the stamp is taken before the file is read, so a change
// made while it is read shows at the next open.
//
// # Files that change behind Prime's back
//
// A session file only grows: an append is the only change another process
// may make. Anything else (truncated, replaced, removed, rewritten) is
// [ErrFileChanged], and is never read as if it were the file indexed: a
// line read back that is cut short or is not the one indexed (its
// CRC-32C) fails with it; an append first checks that the file is the
// same file (inode), no shorter, and has the header and the last bytes it
// read where they were, and writes nothing otherwise; the entries of a
// closed session open the file again to read their lines, and fail when
// it is another file. A file replaced by renaming another over it is read
// as it was, through the descriptor the session holds, until then.
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
//     append.
//
// A file that is empty, or whose first JSON line is not a header with a
// string id, is not a session: a [*NotSessionError] naming the file, and
// the file is never written. A message entry whose message cannot be decoded
// (a role pi does not write is fine: it becomes an [UnknownMessage]) stays in
// the tree; [BuildContext] fails with an error naming its line rather than
// silently showing the model a different conversation.
//
// # Writing
//
// A [Session] from [Open] or [Create] appends: each entry is one line,
// written with a single write on a file opened O_APPEND, under an exclusive
// advisory lock (flock; none where the system lacks it). Before writing, it
// checks that the file is still the one it read (see "Files that change
// behind Prime's back"), indexes whatever other processes appended since
// (so its ids stay unique and their entries join its tree; the leaf stays
// where it was), and if the file does not end in a newline it writes one
// first. The line written is indexed like any other and read back from the
// file when needed; the message of a message entry is decoded from it at
// once, for the next context. An append costs the same whatever the file's
// size. Appends are not fsynced: they survive a killed process, not a
// power cut.
//
// An entry Prime makes is written as pi writes the same entry: raw values
// (tool-call arguments, details, what is kept verbatim) as they are, a lone
// surrogate included in the escape JSON.stringify writes for it, and a
// compaction's system message with the entry's time as its timestamp.
//
// A new session is written when its first user or assistant message is
// appended (pi 1.6's rule; pi 0.73 waited for the first reply): the header
// and every entry so far in one write, to a file
// created exclusively (mode 0600, directories 0700), so there is never a
// second header; a very large one (a fork) in runs of whole lines.
// [Session.Flush] writes it earlier.
//
// [Session.Fork] starts a new session from one conversation of a session:
// the path to an entry, with label entries moved after it, every other
// entry byte for byte, and the source recorded as the parent session
// (pi's createBranchedSession; "prime session fork").
//
// Sessions live in ~/.prime/agent/sessions/--<cwd encoded>--/ (the agent
// directory moves with PRIME_CODING_AGENT_DIR; see [AgentDir],
// [SessionsDir], [EncodeCWD]), named <ISO time with ':' and '.' as '-'>_<UUID
// v7>.jsonl ([FileName], [NewSessionID]). [List] and [MostRecent] find them.
//
// # pi bugs Prime does not have
//
// Of pi-reference §10.1: reopening a session that has no conversation
// yet and appending to it no longer writes a second header and duplicate
// entries (#2); a non-empty file that is not a session is an error and left
// untouched, not overwritten (#3); the branch-summary entry records the
// entry navigated away from (#4, the caller's choice through
// [Session.AppendAt]); an all-zero usage is not a usage (#23, see
// [ValidUsage]). Beyond §10: a cycle or a self-parent no longer hangs path
// walks; migration ids are collision-checked and repeatable; a torn tail is
// not glued to the next entry; a migration keeps a backup and the lines it
// could not read; a header longer than 512 bytes does not hide a session
// from [MostRecent].
package session
