// Package sse reads server-sent event streams, the framing both the
// Anthropic Messages API and OpenAI's Chat Completions API stream in.
//
// The reader follows the WHATWG event-stream grammar: lines end in LF, CRLF
// or a lone CR; a line starting with ':' is a comment (servers send them as
// keep-alives); "field: value" lines set the event's type ("event"), data
// ("data", several lines joined with '\n'), "id" and "retry"; a blank line
// dispatches the event. A UTF-8 byte-order mark at the start is skipped.
// Unlike bufio.Scanner, whose 64 KiB token limit breaks on a large tool
// argument, lines may be of any length up to [Reader.MaxEventSize].
//
// Departures from a browser's EventSource, because a model's stream is one
// response rather than a reconnecting feed: an event with no data lines is
// still dispatched when it names a type; a stream whose last event is
// complete but lacks the closing blank line still delivers it (some
// compatible servers end that way); and a stream cut in the middle of a line
// reports io.ErrUnexpectedEOF instead of silently dropping the fragment, so
// a connection broken mid-event is seen as the failure it is.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the "event" field, or "" when the event named none (the
	// browser's "message").
	Type string
	// Data is the event's data lines joined with '\n'.
	Data []byte
	// ID is the last "id" field seen, as the grammar carries it over.
	ID string
}

// IsDone reports whether the event is OpenAI's end-of-stream marker,
// "data: [DONE]".
func (e Event) IsDone() bool { return string(e.Data) == "[DONE]" }

// DefaultMaxEventSize bounds one event's data (64 MiB, the most a whole
// reply may hold): far above any real tool argument, far below what would
// exhaust memory.
const DefaultMaxEventSize = 64 << 20

// ErrEventTooLarge reports an event whose data exceeds the reader's limit.
var ErrEventTooLarge = errors.New("a stream event is too large")

// Reader reads events from a stream.
type Reader struct {
	r *bufio.Reader
	// MaxEventSize bounds the data of one event; 0 means DefaultMaxEventSize.
	MaxEventSize int

	line    []byte // the current line, reused
	data    bytes.Buffer
	typ     string
	lastID  string
	started bool // past the optional byte-order mark
	skipLF  bool // the last line ended in CR
	cut     bool // the stream ended inside a line
	pending bool // some field of the current event was seen
	hasData bool
	err     error
}

// NewReader returns a reader of the events in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event. At the end of the stream it returns io.EOF,
// or io.ErrUnexpectedEOF when the stream ended inside an event. Errors from
// the underlying reader are returned as they are.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.cut {
				err = io.ErrUnexpectedEOF
			} else if err == io.EOF {
				// Complete lines but no closing blank line: some servers end
				// their last event that way. Deliver it, then io.EOF.
				r.err = err
				if ev, ok := r.dispatch(); ok {
					return ev, nil
				}
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// dispatch ends the current event and reports whether there is one to
// return.
func (r *Reader) dispatch() (Event, bool) {
	if !r.pending {
		return Event{}, false
	}
	ev := Event{Type: r.typ, ID: r.lastID}
	deliver := r.hasData || r.typ != ""
	if r.hasData {
		ev.Data = append([]byte{}, r.data.Bytes()...)
	}
	r.data.Reset()
	r.typ = ""
	r.pending = false
	r.hasData = false
	if !deliver {
		// Only an id or retry field: nothing to deliver.
		return Event{}, false
	}
	return ev, true
}

// field processes one non-empty line.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		r.typ = string(value)
		r.pending = true
	case "data":
		max := r.MaxEventSize
		if max <= 0 {
			max = DefaultMaxEventSize
		}
		if r.data.Len()+len(value)+1 > max {
			return fmt.Errorf("%w: more than %d bytes", ErrEventTooLarge, max)
		}
		if r.hasData {
			r.data.WriteByte('\n')
		}
		r.data.Write(value)
		r.hasData = true
		r.pending = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = string(value)
		}
		r.pending = true
	case "retry":
		// Reconnection delay: meaningless for a one-shot response.
		r.pending = true
	}
	return nil
}

// readLine returns the next line without its terminator. The returned slice
// is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	max := r.MaxEventSize
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	for {
		if r.r.Buffered() == 0 {
			if _, err := r.r.Peek(1); err != nil {
				if err == io.EOF && len(r.line) > 0 {
					// A last line without a terminator: cut in the middle.
					r.cut = true
				}
				return nil, err
			}
		}
		buf, _ := r.r.Peek(r.r.Buffered())
		if r.skipLF {
			// The previous line ended in CR; an LF right after it belongs to
			// the same terminator.
			r.skipLF = false
			if buf[0] == '\n' {
				r.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			r.line = append(r.line, buf...)
			r.r.Discard(len(buf))
			if len(r.line) > max {
				return nil, fmt.Errorf("%w: line longer than %d bytes", ErrEventTooLarge, max)
			}
			continue
		}
		r.line = append(r.line, buf[:i]...)
		r.skipLF = buf[i] == '\r'
		r.r.Discard(i + 1)
		if !r.started {
			r.started = true
			r.line = bytes.TrimPrefix(r.line, []byte("\xEF\xBB\xBF"))
		}
		return r.line, nil
	}
}
