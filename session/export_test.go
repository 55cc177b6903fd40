package session

import (
	"os"

	"github.com/prime-agent/prime/llm"
)

// Hooks for the external tests (fuzz_test.go), which cannot be in package
// session because they use sessiongen, which imports it.

var ValidJSON = validJSON

func FastHead(line []byte) (typ, id, parent, ts string, ok bool) {
	h, ok := fastHead(line)
	return string(h.typ), string(h.id), string(h.parent), string(h.ts), ok
}

func SlowHead(line []byte) (typ, id, parent, ts string, err error) {
	h, err := slowHead(line)
	if err != nil {
		return "", "", "", "", err
	}
	return h.Type, h.ID, h.ParentID, h.Timestamp, nil
}

func DecodeLine(line []byte) (*Entry, error) { return NewEntry(line) }

// DecodeFast and DecodeSlow are the two message decoders DecodeMessage
// chooses between.
func DecodeFast(raw []byte) (Message, bool) { return decodeFast(raw) }

var DecodeSlow = decodeMessage

// DecodeFastShared is the fast decoder for an entry's immutable bytes.
func DecodeFastShared(raw []byte) (Message, bool) { return decodeFastShared(raw) }

var SharedString = sharedString

// ReadAll reads r expecting size bytes.
var ReadAll = readAll

// TextArena decodes messages as a context's batches do, the text of their
// strings with escapes sharing blocks of (at first) size bytes, and their
// content lists blocks of (at first) size elements.
type TextArena struct{ a sharedArena }

func NewTextArena(size int) *TextArena {
	return &TextArena{sharedArena{text: make([]byte, 0, size), content: make([]llm.Content, 0, size)}}
}

func (t *TextArena) Decode(raw []byte) (Message, bool) { return fastDecode(raw, true, nil, &t.a) }

// FromIndex says how s was read: "" by indexing the whole file, "trusted"
// or "verified" from the persistent index.
func FromIndex(s *Session) string {
	return [...]string{ReadWhole: "", ReadIndexTrusted: "trusted", ReadIndexChecked: "verified"}[s.from]
}

// IndexFileOf returns where the persistent index of the session file path
// is kept in dir.
func IndexFileOf(dir, path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	x := newIndexFile(dir, path, fi)
	if x == nil {
		return ""
	}
	return x.path
}

// CacheMinBytes is the smallest file whose index is kept.
const CacheMinBytes = cacheMinBytes

// IndexPass runs the index pass alone over the session file at path, after
// its header, as opening it does.
func IndexPass(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	hp, err := readHeaderPart(path, f, fi.Size())
	if err != nil {
		return 0, err
	}
	scan, err := scanLines(f, hp.end, fi.Size(), hp.lines, false)
	if err != nil {
		return 0, err
	}
	return len(scan.recs), nil
}
