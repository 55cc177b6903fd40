package session_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
)

// seedLines adds the lines of a few generated sessions and some odd lines to
// a fuzz corpus.
func seedLines(f *testing.F) {
	for _, seed := range []uint64{1, 2} {
		data := sessiongen.Bytes(sessiongen.Options{Entries: 40, Seed: seed, SizeScale: 0.1, ImageRate: -1, HugeRate: -1})
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	for _, s := range []string{
		``, `{}`, `[]`, `"\ud800"`, `{"a":1,"a":2}`, `-0.5e+3`, `01`, `{"type":"x"`, "\"\x01\"", `{"type":"message","id":"a\"b","parentId":null,"timestamp":"t"}`,
		`{"id":"x","type":"label","parentId":"p","timestamp":1700000000000}`, `{"type":"message","id":"a","parentId":null,"timestamp":"t","id":"b"}`,
		`[[[[[[[[[[1]]]]]]]]]]`, `{"type":true}`, `  {"type":"custom"}  `, `nul`, `tru`, `1e`, `"\u12g4"`,
	} {
		f.Add([]byte(s))
	}
	// Either side of the nesting walk follows itself.
	for _, depth := range []int{64, 65} {
		f.Add([]byte(strings.Repeat(`{"a":[`, depth/2) + `1` + strings.Repeat(`]}`, depth/2)))
	}
}

// TestValidJSONDepth checks nesting around the depth the validator's own
// walk follows (64) and the decoder's limit (10000).
func TestValidJSONDepth(t *testing.T) {
	nest := func(depth int, inner string) string {
		return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
	}
	cases := []struct {
		line string
		want bool
	}{
		{nest(64, "1"), true},
		{nest(65, "1"), true},
		{nest(65, `{"a":"b"}`), true},
		{nest(10000, ""), true},
		{nest(10001, ""), false},
		{nest(64, "1") + "]", false},
		{nest(65, "1") + "]", false},
		{strings.Repeat("[", 65) + strings.Repeat("]", 64) + "}", false},
		{strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70), true},
		{strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 69) + "]", false},
	}
	for _, c := range cases {
		if got := session.ValidJSON([]byte(c.line)); got != c.want {
			t.Errorf("validJSON(%.40q… %d bytes) = %v, want %v", c.line, len(c.line), got, c.want)
		}
	}
}

// TestValidJSONAllocates checks that validating a line allocates nothing:
// the validator and its scanner stay in the caller's frame.
func TestValidJSONAllocates(t *testing.T) {
	line := []byte(`{"type":"message","id":"a","message":{"role":"user","content":"` + strings.Repeat(`long \"text\" `, 200) + `"}}`)
	if !session.ValidJSON(line) {
		t.Fatal("the line is valid")
	}
	if n := testing.AllocsPerRun(100, func() { session.ValidJSON(line) }); n != 0 {
		t.Fatalf("validJSON allocates %v times a line", n)
	}
}

// FuzzValidJSON checks the fast validator against the JSON tokenizer.
func FuzzValidJSON(f *testing.F) {
	seedLines(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		want := jsontext.Value(b).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
		if got := session.ValidJSON(b); got != want {
			t.Fatalf("validJSON(%q) = %v, jsontext says %v", b, got, want)
		}
	})
}

// FuzzDecodeLine checks the line decoder: it never panics, and the fast
// path for the common prefix reads the same fields as the tokenizer.
func FuzzDecodeLine(f *testing.F) {
	seedLines(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := session.DecodeLine(line)
		if err != nil {
			return
		}
		if e.Type == "" && !bytes.Contains(line, []byte(`"type"`)) {
			t.Fatalf("entry without a type from %q", line)
		}
		typ, id, parent, ts, ok := session.FastHead(line)
		if !ok {
			return
		}
		// Lines that repeat a name are read first-wins by the fast path;
		// compare only lines without repeats.
		if !jsontext.Value(line).IsValid(jsontext.AllowInvalidUTF8(true)) {
			return
		}
		st, sid, sp, sts, err := session.SlowHead(line)
		if err != nil {
			t.Fatalf("fast path accepted %q, tokenizer says %v", line, err)
		}
		if typ != st || id != sid || parent != sp || ts != sts {
			t.Fatalf("fast %q/%q/%q/%q, slow %q/%q/%q/%q for %q", typ, id, parent, ts, st, sid, sp, sts, line)
		}
		e.Payload()
		if e.Type == session.TypeMessage {
			e.Message()
		}
	})
}

// FuzzLoad checks the loader on arbitrary files: it never panics, every
// path ends, and writing the session out and reading it back gives the same
// entries.
func FuzzLoad(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3} {
		data := sessiongen.Bytes(sessiongen.Options{Entries: 12, Seed: seed, SizeScale: 0.02, ImageRate: -1, HugeRate: -1, BranchRate: 0.3})
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte(`{"type":"session","id":"v1"}` + "\n" + `{"type":"message","message":{"role":"hookMessage","content":"x"}}` + "\n" + `{"type":"compaction","firstKeptEntryIndex":1,"summary":"s"}`))
	f.Add([]byte(`{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"x","id":"a","parentId":"b"}` + "\n" + `{"type":"x","id":"b","parentId":"a"}`))
	for _, c := range sessiongen.EdgeCases() {
		f.Add(c.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := session.Parse("fuzz", data)
		if err != nil {
			return
		}
		// Every path ends; checking the last 100 entries keeps each run
		// linear in the input.
		es := s.Entries()
		for _, e := range es[max(0, len(es)-100):] {
			if len(s.Path(e.ID)) > s.Len() {
				t.Fatal("path longer than the session")
			}
			s.Context(e.ID)
			e.Payload()
		}
		s.Tree()
		out := bytesOf(t, s)
		r, err := session.Parse("again", out)
		if err != nil {
			t.Fatalf("written session does not load: %v", err)
		}
		if r.Len() != s.Len() || !bytes.Equal(bytesOf(t, r), out) {
			t.Fatalf("round trip: %d entries, then %d", s.Len(), r.Len())
		}
	})
}

// FuzzSystemMessage checks the system message codec on arbitrary input: it
// never panics, and a message it reads is written in a form that reads
// back as the same prompt, tools, estimate and replay.
func FuzzSystemMessage(f *testing.F) {
	for _, c := range sessiongen.EdgeCases() {
		for _, line := range bytes.Split(c.Data, []byte("\n")) {
			if i := bytes.Index(line, []byte(`"message":{"role":"system"`)); i >= 0 {
				f.Add(line[i+len(`"message":`) : len(line)-1])
			}
		}
	}
	for _, s := range []string{`{"role":"system","content":null}`, `{"role":"system","sections":{"1":"a","0":null,"1":"b"}}`,
		`{"role":"system","content":[{"type":"text","text":"\ud800"}],"toolsAdded":[{"name":"a\ud800","parameters":{"x":"\udc00"}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := session.DecodeMessage(raw)
		if err != nil {
			return
		}
		sys, ok := m.(*session.SystemMessage)
		if !ok {
			return
		}
		// As an entry writes it.
		line, err := session.EncodeEntry("e", "", "t", &session.MessageEntry{Message: sys})
		if err != nil {
			t.Fatalf("%q read but not written: %v", raw, err)
		}
		e, err := session.NewEntry(line)
		if err != nil {
			t.Fatalf("%s does not read back: %v", line, err)
		}
		back, err := e.Message()
		if err != nil {
			t.Fatalf("%s does not read back: %v", line, err)
		}
		again := back.(*session.SystemMessage)
		if again.Prompt() != sys.Prompt() || len(again.ToolsAdded) != len(sys.ToolsAdded) || len(again.ToolsRemoved) != len(sys.ToolsRemoved) {
			t.Fatalf("round trip of %q:\n%+v\n%+v", raw, sys, again)
		}
		// Content blocks become their text: an image no longer counts.
		if !bytes.Contains(raw, []byte(`"image"`)) && session.EstimateChars(again) != session.EstimateChars(sys) {
			t.Fatalf("round trip of %q: %d chars, then %d", raw, session.EstimateChars(sys), session.EstimateChars(again))
		}
		r1, r2 := session.ReplaySystem([]session.Message{sys}), session.ReplaySystem([]session.Message{again})
		if (r1 == nil) != (r2 == nil) || r1 != nil && r1.Prompt() != r2.Prompt() {
			t.Fatalf("replay of %q differs after a round trip", raw)
		}
	})
}

// FuzzContextEdit checks the context_edit codec on arbitrary members: it
// never panics, and an edit it reads is written in a form that reads back
// as the same edit.
func FuzzContextEdit(f *testing.F) {
	for _, c := range sessiongen.EdgeCases() {
		for _, line := range bytes.Split(c.Data, []byte("\n")) {
			if i := bytes.Index(line, []byte(`,"targetId":`)); i >= 0 && bytes.Contains(line, []byte(`"context_edit"`)) {
				f.Add(line[i+1 : len(line)-1])
			}
		}
	}
	for _, s := range []string{`"targetId":"a"`, `"targetId":7,"replacement":{"content":""}`, `"replacement":null,"replacement":{"content":[]}`,
		`"targetId":"a","replacement":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"x":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, members []byte) {
		line := append([]byte(`{"type":"context_edit","id":"e","parentId":null,"timestamp":"t",`), members...)
		line = append(line, '}')
		e, err := session.NewEntry(line)
		if err != nil {
			return
		}
		p, err := e.Payload()
		if err != nil {
			return
		}
		edit := p.(*session.ContextEditEntry)
		out, err := session.EncodeEntry("e", "", "t", edit)
		if err != nil {
			t.Fatalf("%s read but not written: %v", line, err)
		}
		back, err := session.NewEntry(out)
		if err != nil {
			t.Fatalf("%s does not read back: %v", out, err)
		}
		q, err := back.Payload()
		if err != nil {
			t.Fatalf("%s does not read back: %v", out, err)
		}
		again := q.(*session.ContextEditEntry)
		if again.TargetID != edit.TargetID || (again.Replacement == nil) != (edit.Replacement == nil) ||
			edit.Replacement != nil && len(again.Replacement.Content) != len(edit.Replacement.Content) {
			t.Fatalf("round trip of %s: %+v, then %+v", line, edit, again)
		}
	})
}

// BenchmarkValidJSON validates every line of a generated session and of
// pi's large session, the bulk of the cost of opening a file.
func BenchmarkValidJSON(b *testing.B) {
	files := map[string][]byte{"gen": sessiongen.Bytes(sessiongen.Options{Entries: 5000, Seed: 1})}
	if dir, ok := pifixtures.Dir(); ok {
		data, err := os.ReadFile(filepath.Join(dir, pifixtures.LargeSession))
		if err != nil {
			b.Fatal(err)
		}
		files["pi-large"] = data
	}
	for name, data := range files {
		lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				for _, l := range lines {
					if !session.ValidJSON(l) {
						b.Fatal("invalid line")
					}
				}
			}
		})
	}
}

// FuzzFork forks sessions read from arbitrary files at their last entries:
// a fork never panics, and written out and read back it holds the path
// without its label entries and shows the model what the original showed.
func FuzzFork(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3} {
		f.Add(sessiongen.Bytes(sessiongen.Options{Entries: 30, Seed: seed, SizeScale: 0.02, ImageRate: -1, HugeRate: -1, BranchRate: 0.3}))
	}
	f.Add([]byte(`{"type":"session","version":3,"id":"s"}` + "\n" +
		`{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"q"}}` + "\n" +
		`{"type":"label","id":"l","parentId":"a","timestamp":"t","targetId":"a","label":"x"}` + "\n" +
		`{"type":"compaction","id":"c","timestamp":"t","summary":"s","firstKeptEntryId":"l","parentId":"l"}` + "\n" +
		`{"type":"message","id":"b","parentId":"c","timestamp":"t","message":{"role":"user","content":"r"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := session.Parse("fuzz", data)
		if err != nil {
			return
		}
		for _, w := range s.Warnings() {
			if w.Kind == session.WarnDuplicateID {
				return // ids name different entries in the fork than in s
			}
		}
		es := s.Entries()
		for _, leaf := range es[max(0, len(es)-5):] {
			if s.Entry(leaf.ID) != leaf {
				continue // no id, or one a later entry took
			}
			fork, err := s.Fork("", leaf.ID, session.Options{CWD: "/fuzz"})
			if err != nil {
				t.Fatalf("fork at %s: %v", leaf.ID, err)
			}
			r, err := session.Parse("fork", bytesOf(t, fork))
			if err != nil {
				t.Fatalf("fork at %s does not load: %v", leaf.ID, err)
			}
			var want []string
			for _, e := range s.Path(leaf.ID) {
				if e.Type != session.TypeLabel {
					want = append(want, e.ID)
				}
			}
			got := ids(r.LeafPath())
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Fatalf("fork at %s: path %v, want %v first", leaf.ID, got, want)
			}
			cw, errW := s.Context(leaf.ID)
			cg, errG := r.Context("")
			if (errW != nil) != (errG != nil) || !slices.Equal(texts(cg.Messages), texts(cw.Messages)) {
				t.Fatalf("fork at %s: context %v (%v), want %v (%v)", leaf.ID, texts(cg.Messages), errG, texts(cw.Messages), errW)
			}
		}
	})
}
