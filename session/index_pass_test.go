package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/session/internal/rawmem"
)

// referenceScan reads data's lines from start one by one, as the loader
// did before the index pass: split at newlines, white space trimmed, each
// non-blank line indexed, a last line without a newline that is not an
// entry left as torn.
func referenceScan(data []byte, start int) (recs []rec, bad []string, lines int, torn string) {
	off := start
	for off < len(data) {
		line, _, terminated := bytes.Cut(data[off:], []byte{'\n'})
		text := bytes.TrimSpace(line)
		if len(text) > 0 {
			lead := bytes.Index(line, text)
			x, err := indexLine(text, int64(off+lead), lines+1)
			switch {
			case err == nil:
				recs = append(recs, x.r)
			case !terminated:
				return recs, bad, lines, fmt.Sprint(lines+1, err)
			default:
				bad = append(bad, fmt.Sprint(lines+1, err))
			}
		}
		lines++
		off += len(line) + 1
	}
	return recs, bad, lines, ""
}

// FuzzScanLines checks the index pass, cut into blocks of a few bytes on
// several goroutines, against reading the lines one by one.
func FuzzScanLines(f *testing.F) {
	for _, s := range []string{
		"{\"type\":\"a\"}\n{\"type\":\"b\",\"id\":\"00000001\"}\n",
		"\n\n  {\"type\":\"x\"}  \n{bad\n{\"type\":\"y\"}",
		"{\"type\":\"x\"}\n{\"type\":\"torn",
		"{\"type\":\"x\",\"pad\":\"" + string(bytes.Repeat([]byte("z"), 300)) + "\"}\n{\"type\":\"y\"}\n",
		"\u00a0{\"type\":\"x\"}\u00a0\n",
	} {
		f.Add([]byte(s), uint8(3), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, block, start uint8) {
		st := min(int(start), len(data))
		if st > 0 && data[st-1] != '\n' {
			st = 0 // the pass starts where a line starts
		}
		wantRecs, wantBad, wantLines, wantTorn := referenceScan(data, st)
		got, err := scanLinesIn(bytes.NewReader(data), int64(st), int64(len(data)), 0, false, int64(block%16)+1)
		if err != nil {
			t.Fatal(err)
		}
		// The file in memory, read in place, and mapped, give the same.
		end := int64(len(data))
		others := map[string]func() blockSource{"memory": func() blockSource { return memBlocks(data) }}
		if len(data) > 0 {
			if f := mapFile(t, data); newMapSource(f, end) != nil {
				others["mapped"] = func() blockSource { return newMapSource(f, end) }
			}
		}
		for name, src := range others {
			other, err := scanWith(src, int64(st), end, 0, false, int64(block%16)+1)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if a, b := scanSummary(other), scanSummary(got); a != b {
				t.Fatalf("read from %s: %s\nread with ReadAt: %s", name, a, b)
			}
		}
		var gotBad []string
		for _, b := range got.bad {
			gotBad = append(gotBad, fmt.Sprint(b.line, b.err))
		}
		gotTorn := ""
		if got.torn != nil {
			gotTorn = fmt.Sprint(got.torn.line, got.torn.err)
		}
		if fmt.Sprint(got.recs) != fmt.Sprint(wantRecs) || fmt.Sprint(gotBad) != fmt.Sprint(wantBad) ||
			got.lines != wantLines || gotTorn != wantTorn {
			t.Fatalf("block %d from %d:\nrecs %v\nwant %v\nbad %v want %v\nlines %d want %d, torn %q want %q",
				block%16+1, st, got.recs, wantRecs, gotBad, wantBad, got.lines, wantLines, gotTorn, wantTorn)
		}
		// The pass reads up to the torn line, or to the end.
		wantEnd := int64(len(data))
		if got.torn != nil {
			wantEnd = got.end
			if i := bytes.LastIndexByte(data[:got.end], '\n'); got.end != 0 && i != int(got.end)-1 && int(got.end) != st {
				t.Fatalf("the torn line does not start a line: end %d", got.end)
			}
		}
		if got.end != wantEnd {
			t.Fatalf("end %d, want %d", got.end, wantEnd)
		}
		// The walker's digests of the lines read are the reference's,
		// and the pass's, added to the walker's of the lines before it,
		// are the same.
		blk := int64(block%16) + 1
		walk := func(from, to int64) digests {
			d, err := lineDigests(func() blockSource { return memBlocks(data) }, from, to, blk)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		ref := referenceDigests(data[:got.end], blk)
		want := fmt.Sprint(withoutZeros(ref.sums), ref.summed, ref.tail)
		if w := walk(0, got.end); fmt.Sprint(withoutZeros(w.sums), w.summed, w.tail) != want {
			t.Fatalf("block %d: the walker's digests %v, the reference's %v", blk, w, ref)
		}
		sums := walk(0, int64(st)).sums
		for i, v := range got.blocks {
			sums = addDigest(sums, got.firstBlock+int64(i), v)
		}
		if fmt.Sprint(withoutZeros(sums)) != fmt.Sprint(withoutZeros(ref.sums)) || got.summed != ref.summed {
			t.Fatalf("block %d from %d: the pass's digests %v summed to %d, the reference's %v", blk, st, sums, got.summed, ref)
		}
	})
}

// mapFile writes data to a file of its own and opens it.
func mapFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A file that shrinks under the pass's map is ErrFileChanged, not a crash:
// the pages past its new end fault when touched.
func TestMappedFileShrinks(t *testing.T) {
	data := bytes.Repeat([]byte(`{"type":"custom","id":"00000001","parentId":null,"timestamp":"x"}`+"\n"), 3*mapMin/64)
	f := mapFile(t, data)
	src := newMapSource(f, int64(len(data)))
	if src == nil {
		t.Skip("no maps on this system")
	}
	defer src.done()
	b, err := src.view(2*mapMin, 2*mapMin+1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f.Name(), 100); err != nil {
		t.Fatal(err)
	}
	err = guardFaults(func() error {
		var sum byte
		for _, c := range b {
			sum += c
		}
		t.Log(sum)
		return nil
	})
	if !errors.Is(err, ErrFileChanged) {
		t.Fatalf("reading past the new end: %v", err)
	}
	// And through the whole pass.
	os.WriteFile(f.Name(), data, 0o600)
	if _, err := scanWith(func() blockSource {
		s := newMapSource(f, int64(len(data)))
		os.Truncate(f.Name(), 100)
		return s
	}, 0, int64(len(data)), 0, false, blockBytes); !errors.Is(err, ErrFileChanged) {
		t.Fatalf("pass over a file that shrank: %v", err)
	}
}

// FuzzIndexLine checks the index pass's reading of one line against the
// standard decoder: it accepts exactly the lines that are valid JSON (as
// JSON.parse reads them) objects with a string "type", and reads from
// them the entry the tokenizer reads.
func FuzzIndexLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"message","id":"1a2b3c4d","parentId":null,"timestamp":"2025-12-03T14:00:00.000Z","message":{"role":"user","content":"hi\n\"x\"","timestamp":1}}`,
		`{"type":"message","id":"1a2b3c4d","parentId":"0f9e8d7c","timestamp":"2025-12-03T14:00:00.000Z"}`,
		`{"type":"label","id":"1a2b3c4d","parentId":null,"timestamp":"2025-12-03T14:00:00.000Z","targetId":"x","label":"\u00e9"} `,
		`{"type":"x","id":"1a2b3c4d","parentId":null,"timestamp":"t","a":[1,2.5e3,{"b":null}],"c":"\ud800"}`,
		`{"type":"x","id":"1a2b3c4d","parentId":null,"timestamp":"t",}`,
		`{"type":"x","id":"1a2b3c4d","parentId":null,"timestamp":"t"}}`,
		`{"id":"1","type":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		x, err := indexLine(line, 0, 1)
		valid := jsontext.Value(line).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
		slow, slowErr := slowHead(line)
		if want := valid && slowErr == nil; (err == nil) != want {
			t.Fatalf("indexLine(%q): %v; valid JSON %v, tokenizer %v", line, err, valid, slowErr)
		}
		if err != nil || !jsontext.Value(line).IsValid(jsontext.AllowInvalidUTF8(true)) {
			return // names repeat: the fast path reads the first (see FuzzDecodeLine)
		}
		y, err := headRec(line, head{}, false)
		if err != nil {
			t.Fatalf("tokenizer %+v, then %v", slow, err)
		}
		a, b := x.r, y.r
		a.off, a.n, a.crc, a.line, a.head, b.off, b.n, b.crc, b.line, b.head = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
		if a.role != b.role && b.role == roleUnknown {
			a.role = 0 // the role is read only with the members in pi's order
		}
		if a != b || fmt.Sprint(x.odd) != fmt.Sprint(y.odd) {
			t.Fatalf("%q: the pass reads %+v %+v, the tokenizer %+v %+v", line, a, x.odd, b, y.odd)
		}
	})
}

// scanSummary prints what a pass found, comparably.
func scanSummary(s *lineScan) string {
	var bad []string
	for _, b := range append(s.bad, ptrs(s.torn)...) {
		bad = append(bad, fmt.Sprint(b.line, b.off, b.n, b.err))
	}
	var extras []string
	for _, x := range s.extras {
		extras = append(extras, fmt.Sprint(x.i, x.odd, x.meta))
	}
	return fmt.Sprint(s.recs, extras, bad, s.lines, s.end, s.midLine, s.blocks, s.firstBlock, s.summed)
}

func ptrs(b *badLine) []badLine {
	if b == nil {
		return nil
	}
	return []badLine{*b}
}

// The persistent index stores records as they are in memory: rec must
// stay a plain type of recSize bytes.
func TestRecLayout(t *testing.T) {
	if got := rawmem.Size[rec](); got != recSize {
		t.Fatalf("a rec is %d bytes; the index format says %d", got, recSize)
	}
	rawmem.Bytes(make([]rec, 1)) // panics if rec is not plain
}
