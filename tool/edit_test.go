package tool

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/golden"
)

func TestEdit(t *testing.T) {
	env := testEnv(t)
	tr := newTranscript(env)
	tests := []struct {
		label, content, args, want string
	}{
		{"one replacement", "alpha\nbeta\ngamma\n", `{"path":"f","edits":[{"oldText":"beta","newText":"BETA"}]}`, "alpha\nBETA\ngamma\n"},
		{"several, matched against the original", "a1\nb2\nc3\n", `{"path":"f","edits":[{"oldText":"c3","newText":"a1"},{"oldText":"a1","newText":"x"}]}`, "x\nb2\na1\n"},
		{"CRLF kept, new lines take it", "one\r\ntwo\r\nthree\r\n", `{"path":"f","edits":[{"oldText":"two\nthree","newText":"2\n2.5\n3"}]}`, "one\r\n2\r\n2.5\r\n3\r\n"},
		{"CRLF in oldText", "one\r\ntwo\r\n", `{"path":"f","edits":[{"oldText":"one\r\ntwo","newText":"1\r\n2"}]}`, "1\r\n2\r\n"},
		{"mixed endings: untouched lines keep theirs", "a\r\nb\nc\r\n", `{"path":"f","edits":[{"oldText":"b","newText":"B\nB2"}]}`, "a\r\nB\nB2\nc\r\n"},
		{"byte order mark kept", "\ufeffhead\nbody\n", `{"path":"f","edits":[{"oldText":"head","newText":"HEAD"}]}`, "\ufeffHEAD\nbody\n"},
		{"fuzzy: curly quotes", "say(\u201chi\u201d)\nnext\n", `{"path":"f","edits":[{"oldText":"say(\"hi\")","newText":"say(\"bye\")"}]}`, "say(\"bye\")\nnext\n"},
		{"fuzzy: trailing spaces in the file", "x = 1   \ny = 2\n", `{"path":"f","edits":[{"oldText":"x = 1\ny = 2","newText":"x = 3\ny = 4"}]}`, "x = 3\ny = 4\n"},
		{"fuzzy: untouched lines keep their bytes", "keep \u2014 me  \nfix\u00a0this\nkeep\u2019s\n", `{"path":"f","edits":[{"oldText":"fix this","newText":"fixed"}]}`, "keep \u2014 me  \nfixed\nkeep\u2019s\n"},
		{"fuzzy and exact together", "a \u2013 b\nplain\n", `{"path":"f","edits":[{"oldText":"a - b","newText":"A"},{"oldText":"plain","newText":"P"}]}`, "A\nP\n"},
		{"deleting lines", "1\n2\n3\n4\n", `{"path":"f","edits":[{"oldText":"2\n3\n","newText":""}]}`, "1\n4\n"},
		{"legacy top-level oldText", "old\n", `{"path":"f","oldText":"old","newText":"new"}`, "new\n"},
		{"edits as a JSON string", "old\n", `{"path":"f","edits":"[{\"oldText\":\"old\",\"newText\":\"new\"}]"}`, "new\n"},
		{"a single edit object", "old\n", `{"path":"f","edits":{"oldText":"old","newText":"new"}}`, "new\n"},
		{"empty oldText", "x\n", `{"path":"f","edits":[{"oldText":"","newText":"y"}]}`, ""},
		{"empty oldText, several", "x\n", `{"path":"f","edits":[{"oldText":"x","newText":"y"},{"oldText":"","newText":"y"}]}`, ""},
		{"not found", "x\n", `{"path":"f","edits":[{"oldText":"nothing","newText":"y"}]}`, ""},
		{"not found, several", "x\n", `{"path":"f","edits":[{"oldText":"x","newText":"y"},{"oldText":"nothing","newText":"y"}]}`, ""},
		{"several occurrences", "dup\ndup\ndup\n", `{"path":"f","edits":[{"oldText":"dup","newText":"y"}]}`, ""},
		{"several occurrences, several", "a\ndup\ndup\n", `{"path":"f","edits":[{"oldText":"a","newText":"b"},{"oldText":"dup","newText":"y"}]}`, ""},
		{"occurrences counted in the fuzzy space", "it\u2019s\nit's\n", `{"path":"f","edits":[{"oldText":"it's","newText":"x"}]}`, ""},
		{"overlap", "abcdef\n", `{"path":"f","edits":[{"oldText":"abcd","newText":"1"},{"oldText":"cdef","newText":"2"}]}`, ""},
		{"no change", "same\n", `{"path":"f","edits":[{"oldText":"same","newText":"same"}]}`, ""},
		{"no change, several", "a b\n", `{"path":"f","edits":[{"oldText":"a","newText":"a"},{"oldText":"b","newText":"b"}]}`, ""},
		{"no edits", "x\n", `{"path":"f","edits":[]}`, ""},
		{"missing file", "", `{"path":"missing","edits":[{"oldText":"a","newText":"b"}]}`, ""},
		{"a directory", "", `{"path":"adir","edits":[{"oldText":"a","newText":"b"}]}`, ""},
	}
	if err := os.Mkdir(filepath.Join(env.CWD, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		p := filepath.Join(env.CWD, "f")
		if tt.content != "" {
			writeFile(t, env.CWD, "f", tt.content)
		}
		res, err := call(t, context.Background(), env, "edit", tt.args)
		tr.add(tt.label, res, err)
		got := readFile(t, p)
		switch {
		case tt.want != "" && err != nil:
			t.Errorf("%s: %v", tt.label, err)
		case tt.want != "" && got != tt.want:
			t.Errorf("%s: file %q, want %q", tt.label, got, tt.want)
		case tt.want == "" && tt.content != "" && got != tt.content:
			t.Errorf("%s: a failed edit changed the file to %q", tt.label, got)
		case tt.want == "" && err == nil:
			t.Errorf("%s: no error", tt.label)
		}
	}
	golden.Check(t, "edit.golden", tr.String())
}

func TestEditDiffDetails(t *testing.T) {
	env := testEnv(t)
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeFile(t, env.CWD, "f.txt", strings.Join(lines, "\n")+"\n")
	res, err := call(t, context.Background(), env, "edit", `{"path":"f.txt","edits":[`+
		`{"oldText":"line 3\n","newText":""},{"oldText":"line 12","newText":"twelve\nand a half"},{"oldText":"line 30\n","newText":"last"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	var d editDetails
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "edit-diff.golden", fmt.Sprintf("first changed line: %d\n\n%s\n\n%s", d.FirstChangedLine, d.Diff, d.Patch))
	if d.FirstChangedLine != 3 {
		t.Errorf("firstChangedLine = %d", d.FirstChangedLine)
	}
}

func TestEditKeepsModeAndLinks(t *testing.T) {
	env := testEnv(t)
	real := writeFile(t, env.CWD, "real.sh", "echo old\n")
	if err := os.Chmod(real, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.sh", filepath.Join(env.CWD, "link.sh")); err != nil {
		t.Fatal(err)
	}
	mustCall(t, env, "edit", `{"path":"link.sh","edits":[{"oldText":"old","newText":"new"}]}`)
	if got := readFile(t, real); got != "echo new\n" {
		t.Errorf("target = %q", got)
	}
	if st, err := os.Lstat(filepath.Join(env.CWD, "link.sh")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o751 {
		t.Errorf("mode = %v", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(env.CWD)
	if len(entries) != 2 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestEditReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes every file")
	}
	env := testEnv(t)
	p := writeFile(t, env.CWD, "ro.txt", "a\n")
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	if got := mustFail(t, env, "edit", `{"path":"ro.txt","edits":[{"oldText":"a","newText":"b"}]}`); !strings.Contains(got, "permission denied") {
		t.Errorf("error %q", got)
	}
}

func TestPrepareArgsLeavesOthersAlone(t *testing.T) {
	tl := toolNamed(t, Env{CWD: "/w"}, "edit").(ArgPreparer)
	for _, args := range []string{`{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`, `[1]`, `not json`, `{"edits":"not json"}`,
		`{"edits":"\"str\""}`, `{"oldText":"only old"}`, `{"edits":{"oldText":1,"newText":"y"}}`} {
		if got := tl.PrepareArgs([]byte(args)); string(got) != args {
			t.Errorf("PrepareArgs(%s) = %s", args, got)
		}
	}
	got := tl.PrepareArgs([]byte(`{"path":"a","edits":[{"oldText":"1","newText":"2"}],"oldText":"3","newText":"4"}`))
	if want := `{"path":"a","edits":[{"oldText":"1","newText":"2"},{"oldText":"3","newText":"4"}]}`; string(got) != want {
		t.Errorf("legacy appended: %s", got)
	}
}

// TestEditProperties edits random files at random places and checks the
// invariants: the written file normalised to LF is the LF text with the
// replacements applied, the line endings of untouched lines are kept, and
// the patch turns the old text into the new one.
func TestEditProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	env := testEnv(t)
	for iter := range 400 {
		content, lfContent := randomFile(r)
		lines := splitLines(lfContent)
		if len(lines) == 0 {
			continue
		}
		// Pick up to three disjoint line ranges and replace each with new text.
		var edits []string
		want := lfContent
		picked := map[int]bool{}
		for range 1 + r.IntN(3) {
			i := r.IntN(len(lines))
			if picked[i] || picked[i-1] || picked[i+1] || strings.Count(lfContent, lines[i]) != 1 {
				continue
			}
			picked[i] = true
			old := strings.TrimSuffix(lines[i], "\n")
			if old == "" {
				continue
			}
			newText := randomLines(r, r.IntN(3))
			edits = append(edits, fmt.Sprintf(`{"oldText":%q,"newText":%q}`, old, newText))
			want = strings.Replace(want, old, newText, 1)
		}
		if len(edits) == 0 || want == lfContent {
			continue
		}
		writeFile(t, env.CWD, "p.txt", content)
		res, err := call(t, context.Background(), env, "edit", `{"path":"p.txt","edits":[`+strings.Join(edits, ",")+`]}`)
		if err != nil {
			t.Fatalf("iteration %d: %v\ncontent %q\nedits %v", iter, err, content, edits)
		}
		got := readFile(t, filepath.Join(env.CWD, "p.txt"))
		if toLF(got) != want {
			t.Fatalf("iteration %d: file %q, want (LF) %q", iter, got, want)
		}
		if !strings.Contains(content, "\r") && got != want {
			t.Fatalf("iteration %d: LF file changed otherwise", iter)
		}
		var d editDetails
		if err := json.Unmarshal(res.Details, &d); err != nil {
			t.Fatal(err)
		}
		applied, err := applyPatch(lfContent, d.Patch)
		if err != nil || applied != want {
			t.Fatalf("iteration %d: patch gives %q, %v; want %q\n%s", iter, applied, err, want, d.Patch)
		}
		// Untouched lines: a line ending in CRLF in the file whose text is
		// not edited is still there with its CRLF.
		for _, l := range strings.SplitAfter(content, "\r\n") {
			if strings.HasSuffix(l, "\r\n") && !strings.ContainsAny(strings.TrimSuffix(l, "\r\n"), "\r\n") {
				text := strings.TrimSuffix(l, "\r\n")
				if strings.Contains(want, text+"\n") && !strings.Contains(strings.Join(edits, ""), text) && !strings.Contains(got, text+"\r\n") {
					t.Fatalf("iteration %d: line %q lost its CRLF", iter, text)
				}
			}
		}
	}
}

// randomFile returns a file with random line endings (LF, CRLF, sometimes
// a lone CR), and its LF form.
func randomFile(r *rand.Rand) (string, string) {
	n := 1 + r.IntN(12)
	var b strings.Builder
	for i := range n {
		b.WriteString(fmt.Sprintf("l%d-%d %s", i, r.IntN(1000), strings.Repeat("x", r.IntN(4))))
		if i == n-1 && r.IntN(3) == 0 {
			break // no final line break
		}
		switch r.IntN(6) {
		case 0, 1:
			b.WriteString("\r\n")
		case 2:
			if r.IntN(4) == 0 {
				b.WriteString("\r")
				break
			}
			b.WriteString("\n")
		default:
			b.WriteString("\n")
		}
	}
	return b.String(), toLF(b.String())
}

func randomLines(r *rand.Rand, n int) string {
	var parts []string
	for range n + 1 {
		parts = append(parts, fmt.Sprintf("new%d", r.IntN(100)))
	}
	return strings.Join(parts, "\n")
}

// FuzzEdit applies an edit taken from the content itself and checks the
// same invariants as TestEditProperties, on any bytes.
func FuzzEdit(f *testing.F) {
	f.Add("a\r\nb\nc\r", 2, 3, "X\nY")
	f.Add("\ufeffx \u201cy\u201d  \nz", 0, 5, "q")
	f.Add("dup dup", 0, 3, "")
	f.Fuzz(func(t *testing.T, content string, at, n int, newText string) {
		if at < 0 || n <= 0 || at+n > len(content) || len(content) > 4096 {
			return
		}
		old := content[at : at+n]
		base := toLF(strings.TrimPrefix(content, bom))
		updated, reps, err := applyEdits(base, []textEdit{{toLF(old), toLF(newText)}}, "f")
		if err != nil {
			return // not unique, not found after normalising, no change: all reported
		}
		final := updated
		if c := strings.TrimPrefix(content, bom); c != base {
			final = spliceOriginal(c, reps)
		}
		if toLF(final) != updated {
			t.Fatalf("spliced %q normalises to %q, want %q", final, toLF(final), updated)
		}
		oldLines, newLines := splitLines(base), splitLines(updated)
		patch := unifiedDiff("f", oldLines, newLines, diffLines(oldLines, newLines))
		if got, err := applyPatch(base, patch); err != nil || got != updated {
			t.Fatalf("patch gives %q, %v; want %q\n%s", got, err, updated, patch)
		}
	})
}
