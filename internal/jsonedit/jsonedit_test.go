package jsonedit

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src      string
		line, col      int
		msgContains    string
		offsetAtTheEnd bool
	}{
		{name: "trailing comma", src: "{\n  \"a\": 1,\n}", line: 2, col: 9, msgContains: "trailing comma"},
		{name: "trailing comma in an array", src: "[1, 2 , ]", line: 1, col: 7, msgContains: "trailing comma"},
		{name: "missing colon", src: "{\n  \"a\" 1\n}", line: 2, col: 7, msgContains: "expecting ':'"},
		{name: "bad literal", src: "{\"a\": tru}", line: 1, col: 10, msgContains: "literal true"},
		{name: "truncated", src: "{\n  \"compaction\": {\n    \"enabled\": true", line: 3, col: 20, msgContains: "unexpected end of file"},
		{name: "two values", src: "{}\n{}", line: 2, col: 1, msgContains: "after the top-level value"},
		{name: "comment", src: "{\n  // no\n}", line: 2, col: 3, msgContains: "invalid character '/'"},
		{name: "column counts characters", src: "{\"é\": 1 2}", line: 1, col: 9, msgContains: "invalid character '2'"},
		{name: "byte order mark not counted", src: "\ufeff{\"a\" 1}", line: 1, col: 6, msgContains: "expecting ':'"},
		{name: "single quotes", src: "{'a': 1}", line: 1, col: 2, msgContains: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a *SyntaxError", tt.src, err)
			}
			if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msgContains) {
				t.Errorf("Parse(%q) = line %d, column %d, %q; want line %d, column %d, containing %q",
					tt.src, se.Line, se.Column, se.Msg, tt.line, tt.col, tt.msgContains)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, src := range []string{
		"", "  \n", "{}", "\ufeff{\"a\": 1}", `{"a": 1, "a": 2}`, "{\"a\": \"\xff\"}", `[1, 2]`, `"text"`, `{"a": "\ud800"}`,
	} {
		if _, err := Parse([]byte(src)); err != nil {
			t.Errorf("Parse(%q) = %v, want no error", src, err)
		}
	}
	d, _ := Parse([]byte(`{"a": 1, "b": {"c": [true, null]}, "a": 2}`))
	if got := string(d.Raw(d.Lookup([]string{"a"}))); got != "2" {
		t.Errorf("duplicate name: got %s, want the last one (2)", got)
	}
	if got := string(d.Raw(d.Lookup([]string{"b", "c"}))); got != "[true, null]" {
		t.Errorf("Lookup(b.c) = %s", got)
	}
	if d.Lookup([]string{"a", "x"}) != nil || d.Lookup([]string{"zz"}) != nil {
		t.Error("Lookup through a number or of a missing name should be nil")
	}
}

// pi's own layout: JSON.stringify(settings, null, 2).
const piFile = `{
  "defaultProvider": "anthropic",
  "compaction": {
    "enabled": true,
    "reserveTokens": 16384
  },
  "packages": [
    "npm:foo"
  ]
}`

func TestSet(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		path  string
		value string
		want  string
	}{
		{
			name: "change a value in place", src: piFile, path: "compaction.enabled", value: "false",
			want: strings.Replace(piFile, `"enabled": true`, `"enabled": false`, 1),
		},
		{
			name: "add a member to a nested object", src: piFile, path: "compaction.keepRecentTokens", value: "30000",
			want: strings.Replace(piFile, "\"reserveTokens\": 16384\n", "\"reserveTokens\": 16384,\n    \"keepRecentTokens\": 30000\n", 1),
		},
		{
			name: "add a nested object at the top", src: piFile, path: "retry.maxRetries", value: "5",
			want: strings.Replace(piFile, "  ]\n}", "  ],\n  \"retry\": {\n    \"maxRetries\": 5\n  }\n}", 1),
		},
		{
			name: "empty file", src: "", path: "compaction.enabled", value: "false",
			want: "{\n  \"compaction\": {\n    \"enabled\": false\n  }\n}\n",
		},
		{
			name: "empty object", src: "{}", path: "a", value: "1",
			want: "{\n  \"a\": 1\n}",
		},
		{
			name: "empty nested object in a multi-line file", src: "{\n  \"compaction\": {},\n  \"x\": 1\n}", path: "compaction.enabled", value: "true",
			want: "{\n  \"compaction\": {\n    \"enabled\": true\n  },\n  \"x\": 1\n}",
		},
		{
			name: "single-line file stays on one line", src: `{"a":1,"b":{"c":2}}`, path: "b.d", value: `[1,2]`,
			want: `{"a":1,"b":{"c":2, "d":[1, 2]}}`,
		},
		{
			name: "single-line object inside a multi-line file", src: "{\n  \"compaction\": {\"enabled\": true}\n}", path: "compaction.reserveTokens", value: "1",
			want: "{\n  \"compaction\": {\"enabled\": true, \"reserveTokens\": 1}\n}",
		},
		{
			name: "tabs and CRLF are kept", src: "{\r\n\t\"a\": 1\r\n}\r\n", path: "b.c", value: "true",
			want: "{\r\n\t\"a\": 1,\r\n\t\"b\": {\r\n\t\t\"c\": true\r\n\t}\r\n}\r\n",
		},
		{
			name: "four-space indent and tight colons", src: "{\n    \"a\":1\n}", path: "b.c", value: "2",
			want: "{\n    \"a\":1,\n    \"b\":{\n        \"c\":2\n    }\n}",
		},
		{
			name: "array value is laid out like the file", src: "{\n  \"trusted\": []\n}", path: "trusted", value: `["/a","/b"]`,
			want: "{\n  \"trusted\": [\n    \"/a\",\n    \"/b\"\n  ]\n}",
		},
		{
			name: "object value replaced", src: piFile, path: "compaction", value: `{"enabled":false}`,
			want: strings.Replace(piFile, "{\n    \"enabled\": true,\n    \"reserveTokens\": 16384\n  }", "{\n    \"enabled\": false\n  }", 1),
		},
		{
			name: "the last of duplicate names is edited", src: `{"a": 1, "a": 2}`, path: "a", value: "3",
			want: `{"a": 1, "a": 3}`,
		},
		{
			name: "null on the way becomes an object", src: "{\n  \"compaction\": null\n}", path: "compaction.enabled", value: "false",
			want: "{\n  \"compaction\": {\n    \"enabled\": false\n  }\n}",
		},
		{
			name: "byte order mark kept", src: "\ufeff{\"a\": 1}", path: "a", value: "2",
			want: "\ufeff{\"a\": 2}",
		},
		{
			name: "unknown keys and odd spacing untouched", src: "{ \"z\" :  [1,2] ,\n\"compaction\" : { \"enabled\" : true } , \"y\":{} }", path: "compaction.enabled", value: "false",
			want: "{ \"z\" :  [1,2] ,\n\"compaction\" : { \"enabled\" : false } , \"y\":{} }",
		},
		{
			name: "names needing escapes", src: "{}", path: "m.a\"b/c", value: `"x"`,
			want: "{\n  \"m\": {\n    \"a\\\"b/c\": \"x\"\n  }\n}",
		},
		{
			name: "string value with escapes kept as given", src: `{"s": 1}`, path: "s", value: `"\u00e9\n"`,
			want: `{"s": "\u00e9\n"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Set(strings.Split(tt.path, "."), []byte(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Set(%s, %s) mismatch (-want +got):\n%s", tt.path, tt.value, diff)
			}
		})
	}
}

func TestSetRefuses(t *testing.T) {
	tests := []struct {
		src, path, want string
	}{
		{`{"compaction": 5}`, "compaction.enabled", "compaction is a number, not an object"},
		{`{"compaction": [true]}`, "compaction.enabled", "compaction is an array, not an object"},
		{`{"a": {"b": "x"}}`, "a.b.c", "a.b is a string, not an object"},
		{`[]`, "a", "the top-level value is an array, not an object"},
		{`"x"`, "a", "the top-level value is a string, not an object"},
	}
	for _, tt := range tests {
		d, err := Parse([]byte(tt.src))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Set(strings.Split(tt.path, "."), []byte("1"))
		if !errors.Is(err, ErrNotObject) || err.Error() != tt.want {
			t.Errorf("Set(%s) on %s = %v, want %q", tt.path, tt.src, err, tt.want)
		}
	}
	d, _ := Parse([]byte(`{}`))
	if _, err := d.Set([]string{"a"}, []byte("{")); err == nil {
		t.Error("Set with an invalid value: no error")
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name, src, path, want string
		found                 bool
	}{
		{
			name: "middle member", src: "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}", path: "b", found: true,
			want: "{\n  \"a\": 1,\n  \"c\": 3\n}",
		},
		{
			name: "first member", src: "{\n  \"a\": 1,\n  \"b\": 2\n}", path: "a", found: true,
			want: "{\n  \"b\": 2\n}",
		},
		{
			name: "last member", src: "{\n  \"a\": 1,\n  \"b\": 2\n}", path: "b", found: true,
			want: "{\n  \"a\": 1\n}",
		},
		{
			name: "only member", src: "{\n  \"c\": {\n    \"enabled\": true\n  }\n}", path: "c.enabled", found: true,
			want: "{\n  \"c\": {}\n}",
		},
		{
			name: "every duplicate", src: `{"a": 1, "b": 2, "a": 3}`, path: "a", found: true,
			want: `{"b": 2}`,
		},
		{
			name: "missing", src: `{"a": 1}`, path: "b.c", found: false,
			want: `{"a": 1}`,
		},
		{
			name: "through a non-object", src: `{"a": 1}`, path: "a.b", found: false,
			want: `{"a": 1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			got, found, err := d.Delete(strings.Split(tt.path, "."))
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.found {
				t.Errorf("found = %v, want %v", found, tt.found)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Delete(%s) mismatch (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

// leaves lists every value in the document as path=raw text, in order,
// leaving out the value at skip and everything under it and recursing only
// into the objects on the way to skip (their text changes with the edit).
func leaves(t *testing.T, src []byte, skip []string) []string {
	t.Helper()
	d, err := Parse(src)
	if err != nil {
		t.Fatalf("leaves: %v", err)
	}
	var out []string
	var walk func(n *Node, path []string)
	walk = func(n *Node, path []string) {
		onTheWay := len(path) < len(skip) && slices.Equal(path, skip[:len(path)])
		if n.Kind != '{' || !onTheWay {
			out = append(out, strings.Join(path, "\x00")+"="+string(d.Raw(n)))
			return
		}
		for _, m := range n.Members {
			p := append(slices.Clone(path), m.Name)
			if slices.Equal(p, skip) {
				continue
			}
			walk(m.Value, p)
		}
	}
	if d.Root != nil {
		walk(d.Root, nil)
	}
	return out
}

func FuzzEdit(f *testing.F) {
	f.Add([]byte(piFile), "compaction", "enabled", []byte("false"), false)
	f.Add([]byte(piFile), "retry", "maxRetries", []byte("7"), false)
	f.Add([]byte(piFile), "compaction", "reserveTokens", []byte(""), true)
	f.Add([]byte("{\r\n\t\"a\": {\"b\": 1}\r\n}"), "a", "c", []byte(`{"x":[1,{"y":null}]}`), false)
	f.Add([]byte(`{"a":1,"a":{"b":2}}`), "a", "b", []byte(`"s"`), true)
	f.Add([]byte("\ufeff{}"), "k", "", []byte(`[]`), false)
	f.Add([]byte(`{"x": {}}`), "x", "y", []byte(`{}`), false)
	f.Fuzz(func(t *testing.T, src []byte, a, b string, value []byte, del bool) {
		d, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Column < 1 {
				t.Fatalf("Parse error %v is not a positioned *SyntaxError", err)
			}
			return
		}
		path := []string{a}
		if b != "" {
			path = append(path, b)
		}
		before := bytes.Clone(src)
		if del {
			out, found, err := d.Delete(path)
			if err != nil {
				t.Fatalf("Delete(%q): %v", path, err)
			}
			if !bytes.Equal(src, before) {
				t.Fatal("Delete modified its input")
			}
			if !found {
				if !bytes.Equal(out, src) {
					t.Fatal("Delete changed the text but found nothing")
				}
				return
			}
			d2, err := Parse(out)
			if err != nil {
				t.Fatalf("Delete(%q) of %q gave invalid JSON %q: %v", path, src, out, err)
			}
			if d2.Lookup(path) != nil {
				t.Fatalf("Delete(%q): still there in %q", path, out)
			}
			if diff := cmp.Diff(leaves(t, src, path), leaves(t, out, path)); diff != "" {
				t.Fatalf("Delete(%q) changed other values (-before +after):\n%s", path, diff)
			}
			return
		}
		if !jsontext.Value(value).IsValid() {
			return
		}
		out, err := d.Set(path, value)
		if !bytes.Equal(src, before) {
			t.Fatal("Set modified its input")
		}
		if err != nil {
			var pe *PathError
			if errors.As(err, &pe) {
				return // a non-object on the way: refused, by design
			}
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Set(%q, %s) on %q: %v", path, value, src, err)
			}
			return // e.g. a name that is not valid UTF-8
		}
		d2, err := Parse(out)
		if err != nil {
			t.Fatalf("Set(%q, %s) on %q gave invalid JSON %q: %v", path, value, src, out, err)
		}
		got := jsontext.Value(bytes.Clone(d2.Raw(d2.Lookup(path))))
		want := jsontext.Value(bytes.Clone(value))
		if got.Compact() != nil || want.Compact() != nil || !bytes.Equal(got, want) {
			t.Fatalf("Set(%q): got %s, want %s", path, got, want)
		}
		if d.Root != nil {
			if diff := cmp.Diff(leaves(t, src, path), leaves(t, out, path)); diff != "" {
				t.Fatalf("Set(%q) changed other values (-before +after):\n%s", path, diff)
			}
		}
	})
}
