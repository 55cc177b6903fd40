package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAll collects every event and the error that ended the stream.
func readAll(r io.Reader, max int) ([]Event, error) {
	sr := NewReader(r)
	sr.MaxEventSize = max
	var evs []Event
	for {
		ev, err := sr.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
		err  error
	}{
		{
			name: "anthropic shape",
			in:   "event: message_start\ndata: {\"a\":1}\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n",
			want: []Event{{Type: "message_start", Data: []byte(`{"a":1}`)}, {Type: "ping", Data: []byte(`{"type": "ping"}`)}},
			err:  io.EOF,
		},
		{
			name: "openai shape with done",
			in:   "data: {\"x\":1}\n\ndata: [DONE]\n\n",
			want: []Event{{Data: []byte(`{"x":1}`)}, {Data: []byte("[DONE]")}},
			err:  io.EOF,
		},
		{
			name: "multi-line data",
			in:   "data: one\ndata: two\ndata:three\n\n",
			want: []Event{{Data: []byte("one\ntwo\nthree")}},
			err:  io.EOF,
		},
		{
			name: "comments and keep-alives",
			in:   ": ping\n\n:\ndata: x\n: inside\n\n",
			want: []Event{{Data: []byte("x")}},
			err:  io.EOF,
		},
		{
			name: "CRLF",
			in:   "event: e\r\ndata: a\r\ndata: b\r\n\r\n",
			want: []Event{{Type: "e", Data: []byte("a\nb")}},
			err:  io.EOF,
		},
		{
			name: "lone CR",
			in:   "data: a\rdata: b\r\rdata: c\r\r",
			want: []Event{{Data: []byte("a\nb")}, {Data: []byte("c")}},
			err:  io.EOF,
		},
		{
			name: "byte-order mark",
			in:   "\xEF\xBB\xBFdata: a\n\n",
			want: []Event{{Data: []byte("a")}},
			err:  io.EOF,
		},
		{
			name: "only one space is stripped",
			in:   "data:  two spaces\n\n",
			want: []Event{{Data: []byte(" two spaces")}},
			err:  io.EOF,
		},
		{
			name: "field without colon",
			in:   "data\n\n",
			want: []Event{{Data: []byte("")}},
			err:  io.EOF,
		},
		{
			name: "id carries over, retry ignored, unknown field ignored",
			in:   "id: 7\nretry: 10\nfoo: bar\ndata: a\n\ndata: b\n\n",
			want: []Event{{Data: []byte("a"), ID: "7"}, {Data: []byte("b"), ID: "7"}},
			err:  io.EOF,
		},
		{
			name: "last event without blank line is delivered",
			in:   "data: a\n\ndata: [DONE]\n",
			want: []Event{{Data: []byte("a")}, {Data: []byte("[DONE]")}},
			err:  io.EOF,
		},
		{
			name: "cut in the middle of a line",
			in:   "data: a\n\ndata: {\"trunc",
			want: []Event{{Data: []byte("a")}},
			err:  io.ErrUnexpectedEOF,
		},
		{
			name: "empty stream",
			in:   "",
			err:  io.EOF,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "one byte"} {
				var r io.Reader = strings.NewReader(tt.in)
				if mode == "one byte" {
					r = iotest.OneByteReader(r)
				}
				got, err := readAll(r, 0)
				if !errors.Is(err, tt.err) {
					t.Errorf("%s: err = %v, want %v", mode, err, tt.err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", mode, diff)
				}
			}
		})
	}
}

func TestReaderVeryLongLine(t *testing.T) {
	big := strings.Repeat("x", 10<<20) // 10 MB, far past bufio.Scanner's 64 KiB
	in := "event: content_block_delta\ndata: " + big + "\n\ndata: after\n\n"
	got, err := readAll(strings.NewReader(in), 0)
	if err != io.EOF {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].Data) != len(big) || string(got[1].Data) != "after" {
		t.Fatalf("got %d events, first data %d bytes", len(got), len(got[0].Data))
	}
}

func TestReaderLimit(t *testing.T) {
	in := "data: " + strings.Repeat("x", 1000) + "\n\n"
	_, err := readAll(strings.NewReader(in), 100)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("err = %v, want ErrEventTooLarge", err)
	}
	in = strings.Repeat("data: xxxxxxxxxx\n", 20) + "\n"
	_, err = readAll(strings.NewReader(in), 100)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("many data lines: err = %v, want ErrEventTooLarge", err)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAll(r, 0)
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
}

// FuzzReader checks that no input makes the reader panic or loop, and that
// the events do not depend on how the input is split into reads or on which
// line terminator it uses.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"event: a\ndata: b\n\n",
		"data: 1\ndata: 2\n\n: c\n\ndata: [DONE]\n\n",
		"\xEF\xBB\xBFid: 1\r\nretry: 2\r\ndata\r\n\r\n",
		"data: a\r\rdata: b\r\n\n",
		"data: cut",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, werr := readAll(bytes.NewReader(in), 1<<20)
		got, gerr := readAll(iotest.OneByteReader(bytes.NewReader(in)), 1<<20)
		if !errors.Is(gerr, werr) && !(errors.Is(gerr, ErrEventTooLarge) && errors.Is(werr, ErrEventTooLarge)) {
			t.Fatalf("error differs by read size: %v vs %v", werr, gerr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events differ by read size:\n%s", diff)
		}
		if bytes.ContainsRune(in, '\r') {
			return
		}
		crlf := bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
		got, gerr = readAll(bytes.NewReader(crlf), 1<<20)
		if !errors.Is(gerr, werr) && !(errors.Is(gerr, ErrEventTooLarge) && errors.Is(werr, ErrEventTooLarge)) {
			t.Fatalf("error differs with CRLF: %v vs %v", werr, gerr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events differ with CRLF:\n%s", diff)
		}
	})
}

// BenchmarkReader reads a stream of typical small events (a text delta each).
func BenchmarkReader(b *testing.B) {
	var in bytes.Buffer
	for range 10000 {
		in.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"some words \"}}\n\n")
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

// BenchmarkReaderLongLine reads one 10 MB data line.
func BenchmarkReaderLongLine(b *testing.B) {
	data := []byte("data: " + strings.Repeat("x", 10<<20) + "\n\n")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
