package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/prime-agent/prime/internal/jsonscan"
	"github.com/prime-agent/prime/internal/jsonwire"
)

// The index pass reads four members of every entry line: type, id, parentId
// and timestamp. pi and Prime write them first and in that order, as plain
// strings, so nearly every line starts with
//
//	{"type":"message","id":"1a2b3c4d","parentId":"0f9e8d7c","timestamp":"2025-12-03T14:00:00.000Z",
//
// fastHead reads that prefix with byte comparisons. Any other shape (another
// key order, escapes in the strings, a number timestamp, a version-1 line
// without ids) goes to slowHead, which walks the object with the JSON
// tokenizer. Both give the same answer on every line they both accept;
// FuzzDecodeLine checks it.

// head is what the index pass knows of an entry line. The byte slices point
// into the line.
type head struct {
	typ, id, parent, ts []byte
	// end is the offset just after the timestamp value when the four
	// members were read by fastHead (the rest of the line starts there),
	// or 0 after slowHead.
	end int
}

// slowFields are the common members as slowHead decodes them.
type slowFields struct {
	Type, ID, ParentID, Timestamp string
}

var (
	prefixType   = []byte(`{"type":"`)
	prefixID     = []byte(`,"id":"`)
	prefixParent = []byte(`,"parentId":`)
	prefixTime   = []byte(`,"timestamp":"`)
)

// fastHead reads the common prefix of a line written by pi or Prime. ok is
// false when the line does not have exactly that shape; the caller then uses
// slowHead. fastHead does not validate the rest of the line.
func fastHead(line []byte) (h head, ok bool) {
	rest, ok := bytes.CutPrefix(line, prefixType)
	if !ok {
		return h, false
	}
	if h.typ, rest, ok = plainString(rest); !ok {
		return h, false
	}
	if rest, ok = bytes.CutPrefix(rest, prefixID); !ok {
		return h, false
	}
	if h.id, rest, ok = plainString(rest); !ok {
		return h, false
	}
	if rest, ok = bytes.CutPrefix(rest, prefixParent); !ok {
		return h, false
	}
	switch {
	case bytes.HasPrefix(rest, []byte("null")):
		rest = rest[4:]
	case len(rest) > 0 && rest[0] == '"':
		if h.parent, rest, ok = plainString(rest[1:]); !ok {
			return h, false
		}
	default:
		return h, false
	}
	if rest, ok = bytes.CutPrefix(rest, prefixTime); !ok {
		return h, false
	}
	if h.ts, rest, ok = plainString(rest); !ok {
		return h, false
	}
	if len(rest) == 0 || rest[0] != ',' && rest[0] != '}' {
		return h, false
	}
	h.end = len(line) - len(rest)
	return h, true
}

// plainString reads the body of a JSON string up to its closing quote when
// the string is printable ASCII without escapes, so its bytes are its value.
func plainString(b []byte) (s, rest []byte, ok bool) {
	// Eight bytes at a time up to the first byte that needs a look.
	for i := jsonscan.PlainRun(b, 0, true); i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// errNoType reports a JSON object that is not an entry.
var errNoType = errors.New("object has no string \"type\"")

// slowHead reads the common members of an entry with the JSON tokenizer, in
// any order and with any escapes. The line must already be known to be
// valid JSON.
func slowHead(line []byte) (*slowFields, error) {
	e := new(slowFields)
	var hasType bool
	dec := jsonwire.NewDecoder(line)
	err := jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "type":
			// As with JSON.parse, the last of repeated names wins.
			hasType = dec.PeekKind() == '"'
			e.Type, err = jsonwire.ReadString(dec)
		case "id":
			e.ID, err = readID(dec)
		case "parentId":
			e.ParentID, err = readID(dec)
		case "timestamp":
			e.Timestamp, err = readTimestamp(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
	if err == nil {
		if _, extra := dec.ReadToken(); extra != io.EOF {
			err = fmt.Errorf("data after the entry object")
		}
	}
	if err != nil {
		return nil, err
	}
	if !hasType {
		return nil, errNoType
	}
	return e, nil
}

// malformed explains why a line is not valid JSON. It runs only for lines
// validJSON rejected, so its cost does not matter.
func malformed(line []byte) error {
	dec := jsonwire.NewDecoder(line)
	_, err := dec.ReadValue()
	if err == nil {
		_, err = dec.ReadToken()
		if err == io.EOF || err == nil {
			err = errors.New("data after the JSON value")
		}
	}
	return fmt.Errorf("malformed JSON: %w", err)
}
