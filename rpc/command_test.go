package rpc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/jsonwire"
)

func TestReadLines(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"lf", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"only the last cr", "a\r\r\n", []string{"a\r"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"empty lines", "\n\r\na\n\n", []string{"a"}},
		{"separators inside", "a\u2028b\u2029c\rd\n", []string{"a\u2028b\u2029c\rd"}},
		{"long", long + "\nb", []string{long, "b"}},
		{"nothing", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := make(chan inLine)
			go func() {
				defer close(ch)
				readLines(iotest.OneByteReader(strings.NewReader(c.in)), ch, nil)
			}()
			var got []string
			for l := range ch {
				got = append(got, string(l.data))
			}
			if !cmp.Equal(got, c.want) {
				t.Errorf("got %d lines %.80q, want %.80q", len(got), got, c.want)
			}
		})
	}
}

// TestReadLinesQuit: a reader stopped while it has a line to hand over
// returns.
func TestReadLinesQuit(t *testing.T) {
	quit := make(chan struct{})
	close(quit)
	readLines(strings.NewReader("a\nb\n"), make(chan inLine), quit)
}

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		line, typ, id string
		err           string
	}{
		{`{"type":"get_state"}`, "get_state", "", ""},
		{`{"id":"a b","type":"x"}`, "x", `"a b"`, ""},
		{`{ "id" : 1.50 , "type":"x" }`, "x", `1.50`, ""},
		{`{"type":"a","type":"b"}`, "b", "", ""},
		{"{\"id\":\"\xff\",\"type\":\"x\"}", "x", "\"\uFFFD\"", ""},
		{`{"type":"x"} {}`, "", "", "Failed to parse command: "},
		{`{"id":"k","type":null}`, "", `"k"`, `"type" must be a string naming the command, not null`},
		{`12`, "", "", "not a number"},
		{``, "", "", "Failed to parse command: "},
	} {
		cmd, err := parseCommand([]byte(c.line))
		switch {
		case c.err != "":
			var pe *parseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.line, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.line, err)
		case cmd.typ != c.typ:
			t.Errorf("%s: type %q, want %q", c.line, cmd.typ, c.typ)
		}
		if cmd != nil && string(cmd.id) != c.id {
			t.Errorf("%s: id %s, want %s", c.line, cmd.id, c.id)
		}
	}
}

// FuzzParseCommand: any line parses or is a parse error, and the response
// written for it is one valid JSON object, valid UTF-8, on one line.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		`{"type":"prompt","message":"hi","images":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`,
		`{"id":{"a":[1,2,{"b":null}]},"type":"get_state"}`,
		`{"id":"\ud800","type":"x\u0000"}`,
		"{\"type\":\"\xc3\x28\"}",
		`[`, `{"type":`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := parseCommand(line)
		var id jsontext.Value
		command := "parse"
		text := ""
		if err != nil {
			var pe *parseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a parse error: %v", err)
			}
			text = err.Error()
			if c != nil {
				id = c.id
			}
		} else {
			id, command = c.id, c.typ
			// The accessors never panic, whatever the members hold.
			c.str("message")
			c.optBool("summarize")
			c.boolean("enabled")
			c.oneOf("mode", true, "all", "one-at-a-time")
			c.images()
			c.idText()
		}
		resp := appendResponse(nil, id, command, err == nil, nil, text)
		if !utf8.Valid(resp) || bytes.IndexByte(resp, '\n') >= 0 {
			t.Fatalf("response %q is not one line of UTF-8", resp)
		}
		if !jsontext.Value(resp).IsValid(jsonwire.ReadOptions) || jsontext.Value(resp).Kind() != '{' {
			t.Fatalf("response %q is not a JSON object", resp)
		}
	})
}
