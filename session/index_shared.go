package session

import "github.com/prime-agent/prime/session/internal/rawmem"

// sharedString returns the bytes of b as a string without copying them
// (rawmem.String): the string and b share memory. It is how the messages
// decoded from lines read back refer to their text (every string value
// without escapes) instead of holding a second copy of it, and how entries
// refer to the ids and timestamps written into their block's buffer.
//
// rawmem.String needs bytes that are never written again while the string
// may be used. What it is used on satisfies that: lines read back from a
// file are read into buffers of their own that nothing writes to
// afterwards, a memory source never changes a byte it holds (it only
// grows), appended lines are fresh encodings, NewEntry copies its input,
// Parse's caller gives up its data (its documented contract), and a
// block's buffer is only appended to. Functions that decode a caller's
// buffer, such as [DecodeMessage], copy instead.
//
// The price is that a decoded string kept keeps the bytes read with it
// (the lines of the context it came from, never the whole file).
// FuzzSharedString checks that the result reads as a copy would.
func sharedString(b []byte) string { return rawmem.String(b) }
