package session

import (
	"bytes"
	"fmt"
	"testing"
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
	})
}
