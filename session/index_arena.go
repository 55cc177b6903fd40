package session

import (
	"unicode/utf8"

	"github.com/prime-agent/prime/llm"
)

// sharedArena holds what the messages of a context's batches share instead
// of allocating each on its own: the text of strings with escapes (see
// textBuffer) and the content lists, many to a block. Each is written once,
// after what was written before it, and never modified afterwards. This
// makes one allocation per block instead of one or more per message,
// rounds nothing up to an allocation size class, and copies no string
// twice. A block lives while anything taken from it does.
type sharedArena struct {
	text    []byte
	content []llm.Content
}

// Block sizes of a sharedArena, unless one string or list needs more.
const (
	textBlock    = 64 << 10
	contentBlock = 1 << 10
)

// contentList returns a copy of blocks (which may be scratch) taken from
// the arena's current content block, its capacity capped so that an
// append to it cannot write into what follows.
func (a *sharedArena) contentList(blocks []llm.Content) []llm.Content {
	if cap(a.content)-len(a.content) < len(blocks) {
		a.content = make([]llm.Content, 0, max(contentBlock, len(blocks)))
	}
	n := len(a.content)
	a.content = append(a.content, blocks...)
	return a.content[n:len(a.content):len(a.content)]
}

// textBuffer is where the decoder writes the text of a string with escapes.
// As a scratch buffer (arena false) it is reused for each string, and the
// string is a copy. As the end of a sharedArena's text block (arena true) each
// string is written once after the strings made before it and is never
// modified afterwards, so the string shares the block's memory, as
// strings.Builder shares its buffer: nothing writes below len(buf), and a
// string that does not fit continues in a new block, leaving the full one
// to the strings already made from it (which keep it alive).
type textBuffer struct {
	buf []byte
	// start is where the string being written starts in buf.
	start int
	// most is the most bytes the string can take.
	most  int
	arena bool
}

// begin starts a string that will take at most most bytes (an escape is
// never shorter than what it stands for, so the raw bytes left bound it).
func (t *textBuffer) begin(most int) {
	if !t.arena {
		t.buf = t.buf[:0]
	}
	t.start, t.most = len(t.buf), most
}

// room makes room for n more bytes without moving the bytes before start.
// A new block has room for the whole string, so a string moves at most
// once.
func (t *textBuffer) room(n int) {
	if !t.arena || cap(t.buf)-len(t.buf) >= n {
		return
	}
	partial := t.buf[t.start:]
	t.buf = append(make([]byte, 0, max(textBlock, t.most, len(partial)+n)), partial...)
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
