package session

import (
	"unicode/utf8"
	"unsafe"
)

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

// textArena holds the text of decoded strings with escapes, many strings to
// a block, so that decoding a large context makes one allocation per block
// instead of one per string, rounds no string up to an allocation size
// class, and copies no string twice.
type textArena struct {
	buf []byte
}

// textBlock is the size of a textArena's blocks, unless a string needs more.
const textBlock = 64 << 10

// textBuffer is where the decoder writes the text of a string with escapes.
// As a scratch buffer (arena false) it is reused for each string, and the
// string is a copy. As the end of a textArena's block (arena true) each
// string is written once after the strings made before it and is never
// modified afterwards, so the string shares the block's memory, as
// strings.Builder shares its buffer: nothing writes below len(buf), and a
// string that does not fit continues in a new block, leaving the full one
// to the strings already made from it (which keep it alive).
type textBuffer struct {
	buf []byte
	// start is where the string being written starts in buf.
	start int
	arena bool
}

// begin starts a string.
func (t *textBuffer) begin() {
	if !t.arena {
		t.buf = t.buf[:0]
	}
	t.start = len(t.buf)
}

// room makes room for n more bytes without moving the bytes before start.
func (t *textBuffer) room(n int) {
	if !t.arena || cap(t.buf)-len(t.buf) >= n {
		return
	}
	partial := t.buf[t.start:]
	t.buf = append(make([]byte, 0, max(textBlock, 2*(len(partial)+n))), partial...)
	t.start = 0
}

func (t *textBuffer) write(p []byte) {
	t.room(len(p))
	t.buf = append(t.buf, p...)
}

func (t *textBuffer) writeByte(c byte) {
	t.room(1)
	t.buf = append(t.buf, c)
}

func (t *textBuffer) writeRune(r rune) {
	t.room(utf8.UTFMax)
	t.buf = utf8.AppendRune(t.buf, r)
}

// string returns the string written since begin.
func (t *textBuffer) string() string {
	if !t.arena {
		return string(t.buf[t.start:])
	}
	return sharedString(t.buf[t.start:])
}
