package prompttemplate

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  a  b ", []string{"a", "b"}},
		{`"API compatibility" x`, []string{"API compatibility", "x"}},
		{`doesn't stop`, []string{"doesn't", "stop"}},
		{`'single quoted' "double"`, []string{"single quoted", "double"}},
		{`"the \"fast\" path"`, []string{`the "fast" path`}},
		{`"a\b"`, []string{`a\b`}},
		{`"" x`, []string{"", "x"}},
		{`"unclosed here`, []string{`"unclosed`, "here"}},
		{`a"b c"`, []string{`a"b`, `c"`}},
		{`'it''s'`, []string{"it's'"}},
		{"tab\tnew\nline", []string{"tab", "new", "line"}},
		{`"`, []string{`"`}},
		{`"x\"`, []string{`"x\"`}},
	}
	for _, tt := range tests {
		if got := SplitArgs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	args := []string{"one", "two words", "three"}
	tests := []struct {
		body string
		args []string
		want string
	}{
		{"$1 and $2", args, "one and two words"},
		{"$4|", args, "|"},
		{"all: $@", args, "all: one two words three"},
		{"all: $ARGUMENTS", args, "all: one two words three"},
		{"${1:-default}", nil, "default"},
		{"${1:-default}", []string{""}, "default"},
		{"${2:-x}", args, "two words"},
		{"${@:-nothing}", nil, "nothing"},
		{"${ARGUMENTS:-nothing}", args, "one two words three"},
		{"${@:2}", args, "two words three"},
		{"${@:0}", args, "one two words three"},
		{"${@:2:1}", args, "two words"},
		{"${@:3:9}", args, "three"},
		{"${@:9}", args, ""},
		{"${@:99999999999999999999}", args, ""},
		{"${@:1:99999999999999999999}", args, "one two words three"},
		{"$99999999999999999999", args, ""},
		{"$1", []string{"$2"}, "$2"},
		{"$@", []string{"${1:-x}"}, "${1:-x}"},
		{"cost $ 5, $x, ${foo}", args, "cost $ 5, $x, ${foo}"},
		{"${1:-a:-b}", nil, "a:-b"},
		{"$10", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, "j"},
	}
	for _, tt := range tests {
		if got := Substitute(tt.body, tt.args); got != tt.want {
			t.Errorf("Substitute(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
}

func TestExpand(t *testing.T) {
	ts := []Template{{Name: "review", Body: "Review ${1:-everything}. Extra: ${@:2}"}}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"/review", "Review everything. Extra: ", true},
		{`/review "the parser" now please`, "Review the parser. Extra: now please", true},
		{"/review\nmulti", "Review multi. Extra: ", true},
		{"/reviews x", "/reviews x", false},
		{"review x", "review x", false},
		{"/", "/", false},
	}
	for _, tt := range tests {
		got, ok := Expand(ts, tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Expand(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzArgs(f *testing.F) {
	for _, s := range []string{"", `"a b" c`, `'x`, `"\"`, "${@:2:1} $1 $@"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, body, args string) {
		parts := SplitArgs(args)
		for _, p := range parts {
			if len(p) > len(args) {
				t.Fatalf("argument %q longer than the input", p)
			}
		}
		out := Substitute(body, parts)
		if !strings.ContainsAny(body, "$") && out != body {
			t.Fatalf("body without $ changed: %q -> %q", body, out)
		}
	})
}
