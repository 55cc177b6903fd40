package frontmatter

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, body string
		fields         map[string]any
		wantErr        bool
	}{
		{name: "none", in: "just text\n", body: "just text\n"},
		{name: "simple", in: "---\nname: a\ndescription: b c\n---\n\n# Body\n", body: "# Body",
			fields: map[string]any{"name": "a", "description": "b c"}},
		{name: "crlf and bom", in: "\ufeff---\r\nname: a\r\n---\r\nbody\r\n", body: "body", fields: map[string]any{"name": "a"}},
		{name: "no closing", in: "---\nname: a\nbody", body: "---\nname: a\nbody"},
		{name: "empty frontmatter", in: "---\n---\nbody", body: "body", fields: map[string]any{}},
		{name: "folded", in: "---\ndescription: >\n  one\n  two\n---\nx", body: "x", fields: map[string]any{"description": "one two"}},
		{name: "bool", in: "---\ndisable-model-invocation: true\n---\n", body: "", fields: map[string]any{"disable-model-invocation": true}},
		{name: "bad yaml", in: "---\nname: [a\n---\nbody", body: "body", wantErr: true},
		{name: "list", in: "---\n- a\n---\nbody", body: "body", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if d.Body != tt.body {
				t.Errorf("body = %q, want %q", d.Body, tt.body)
			}
			if tt.wantErr {
				return
			}
			if len(d.Fields) != len(tt.fields) || (tt.fields == nil) != (d.Fields == nil) {
				t.Fatalf("fields = %v, want %v", d.Fields, tt.fields)
			}
			for k, v := range tt.fields {
				if d.Fields[k] != v {
					t.Errorf("%s = %#v, want %#v", k, d.Fields[k], v)
				}
			}
		})
	}
	if _, err := Parse("---\n- a\n---\n"); !errors.Is(err, ErrNotMapping) {
		t.Errorf("list frontmatter: %v, want ErrNotMapping", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "---\nname: a\n---\nb", "---\n---", "---\nx: [\n---\n", "\ufeff---\r\na: 1\r\n---"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err == nil && strings.HasPrefix(strings.TrimPrefix(s, "\ufeff"), "---") && d.Fields == nil && strings.Contains(s[3:], "\n---") {
			t.Fatalf("frontmatter %q parsed without error but has no fields", s)
		}
		if len(d.Body) > len(s) {
			t.Fatalf("body longer than input")
		}
	})
}
