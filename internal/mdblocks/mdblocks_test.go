package mdblocks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	doc := "# Title\n\n<!-- tested: a.sh (the script) -->\n```sh\necho a\n\necho b\n```\n\ntext\n<!-- tested: b.json -->\n```\n{}\n```\n```\nuntested\n```\n"
	got, err := Parse("doc.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.sh": "echo a\n\necho b\n", "b.json": "{}\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ doc, err string }{
		{"<!-- tested: x -->\ntext\n", "doc.md:1: no code block after the marker"},
		{"<!-- tested: x -->", "doc.md:1: no code block after the marker"},
		{"\n<!-- tested: x -->\n```\nopen\n", "doc.md:3: the code block is not closed"},
		{"<!-- tested: x -->\n```\n```\n<!-- tested: x -->\n```\n```\n", `doc.md:4: a second block named "x"`},
	} {
		if _, err := Parse("doc.md", tc.doc); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.doc, err, tc.err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("<!-- tested: a -->\n```\nx\n```\n")
	f.Add("<!-- tested: a\n```")
	f.Fuzz(func(t *testing.T, doc string) {
		blocks, err := Parse("f.md", doc)
		if err != nil {
			return
		}
		for name, b := range blocks {
			if !strings.Contains(doc, b) {
				t.Errorf("block %q is not text of the document", name)
			}
		}
	})
}
