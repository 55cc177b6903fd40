package session

import "unsafe"

// sharedString returns the bytes of b as a string without copying them: the
// string and b share memory. It is how entries and the messages decoded
// from them refer to the text of a session file (ids, timestamps, and
// every string value without escapes) instead of holding a second copy of
// it, which would double the memory of a large session.
//
// It is safe only for bytes that are never modified again, for as long as
// the string may be used. A session's lines satisfy that: Load, Open and
// the tail reads of appends read them into buffers of their own that
// nothing writes to afterwards, appended lines are fresh encodings, NewEntry
// copies its input, and Parse's caller gives up its data (its documented
// contract). Functions that decode a caller's buffer, such as
// [DecodeMessage], copy instead.
//
// The garbage collector needs no help: a string pointing into the middle
// of a buffer keeps the whole buffer alive, exactly as a slice of it would,
// so the bytes stay valid as long as any string refers to them. The price
// is that a string kept after its session is dropped keeps the session's
// bytes alive with it. FuzzSharedString checks that the result reads as a
// copy would.
func sharedString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
