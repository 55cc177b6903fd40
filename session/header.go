package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// CurrentVersion is the session format version Prime writes.
const CurrentVersion = 3

// Header is the first line of a session file. It names the session and is
// not part of the tree.
type Header struct {
	// Version is the format version: 1 when the file does not say, 3 after
	// an in-memory migration (see [Session.FileVersion] for the version on
	// disk).
	Version int
	// ID is the session id: a UUID for sessions pi and Prime create.
	ID string
	// Timestamp is the ISO-8601 time the session was created.
	Timestamp string
	// CWD is the working directory the session was started in.
	CWD string
	// ParentSession is the path of the session this one was forked from.
	ParentSession string

	raw []byte
}

// Raw returns the header line as stored (after migration, as it would be
// written), without the newline. It must not be modified.
func (h *Header) Raw() []byte { return h.raw }

// decodeHeader reads a header line. ok is false when the line is valid JSON
// but not a session header (no "type":"session" or no string id); err is set
// when it is not a JSON object at all.
func decodeHeader(line []byte) (h *Header, ok bool, err error) {
	h = &Header{raw: line, Version: 1}
	var typ string
	var hasID bool
	dec := jsonwire.NewDecoder(line)
	err = jsonwire.ReadObject(dec, func(name string) error {
		var err error
		switch name {
		case "type":
			typ, err = readAnyString(dec)
		case "id":
			hasID = dec.PeekKind() == '"'
			h.ID, err = readAnyString(dec)
		case "version":
			var n *int
			if dec.PeekKind() == '0' {
				n, err = jsonwire.ReadOptInt(dec)
			} else {
				err = dec.SkipValue()
			}
			if n != nil {
				h.Version = *n
			}
		case "timestamp":
			h.Timestamp, err = readTimestamp(dec)
		case "cwd":
			h.CWD, err = readAnyString(dec)
		case "parentSession":
			h.ParentSession, err = readAnyString(dec)
		default:
			err = dec.SkipValue()
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return h, typ == TypeSession && hasID, nil
}

// readAnyString reads a string member, reading any other value as "" so that
// an odd legacy field does not make a header unreadable.
func readAnyString(dec *jsontext.Decoder) (string, error) {
	if dec.PeekKind() == '"' {
		return jsonwire.ReadString(dec)
	}
	return "", dec.SkipValue()
}

// encodeHeader renders a new header line in pi's key order.
func encodeHeader(h *Header) ([]byte, error) {
	var b bytes.Buffer
	enc := jsontext.NewEncoder(&b)
	err := jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("type", TypeSession)
		w.Int("version", int64(h.Version))
		w.Str("id", h.ID)
		w.Str("timestamp", h.Timestamp)
		w.Str("cwd", h.CWD)
		w.OptStr("parentSession", h.ParentSession)
	})
	if err != nil {
		return nil, fmt.Errorf("encoding session header: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ReadHeader reads only the first line of the file at path as a session
// header: a cheap way to learn a session's version, id and working directory
// without reading its entries. A first line that is not a session header is
// an error.
func ReadHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return nil, err
	}
	line = bytes.TrimSpace(line)
	if !validJSON(line) {
		return nil, errors.New("first line is not JSON")
	}
	h, ok, err := decodeHeader(bytes.Clone(line))
	if err != nil || !ok {
		return nil, errors.New("first line is not a session header")
	}
	return h, nil
}
