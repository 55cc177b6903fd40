// Package session reads and writes Prime's (and pi's) session files: every
// conversation is a tree of entries in an append-only JSONL file.
//
// The file format and its rules are documented in the package's doc
// comments as they are built; see [Entry], [Payload], [BuildContext] and
// [EstimateContextTokens].
package session
