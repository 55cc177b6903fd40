package session

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
)

// digestFile returns the bytes of a session file of at least size bytes:
// entries, blank lines, lines with white space around them, malformed
// lines, and lines long enough to cross a block.
func digestFile(t testing.TB, size int, seed uint64) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/"}` + "\n")
	parent := ""
	for i := 0; len(data) < size; i++ {
		switch rng.IntN(12) {
		case 0:
			data = append(data, "\n"...)
		case 1:
			data = append(data, " \t\r\n"...)
		case 2:
			data = append(data, "{not json\n"...)
		default:
			pad := strings.Repeat("x", rng.IntN(200))
			if rng.IntN(40) == 0 {
				pad = strings.Repeat("y", blockBytes/2+rng.IntN(blockBytes))
			}
			id := string(appendHexID(nil, uint32(i*7919+1)))
			line, err := EncodeEntry(id, parent, "2025-12-03T14:00:01.000Z", &MessageEntry{
				Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: fmt.Sprint(i, pad)}}, Timestamp: 1}})
			if err != nil {
				t.Fatal(err)
			}
			parent = id
			if rng.IntN(6) == 0 {
				data = append(data, "  "...)
				line = append(line, "\u00a0 "...)
			}
			data = append(append(data, line...), '\n')
		}
	}
	return data
}

// savedDigests returns the digests the index file of s would hold, f
// being its file.
func savedDigests(t *testing.T, s *Session, f io.ReaderAt) digests {
	t.Helper()
	img := &indexImage{indexed: s.indexed, sums: slices.Clone(s.sums), summed: min(s.summed, s.indexed)}
	d, ok := img.digests(f)
	if !ok {
		t.Fatalf("no digests: sums %d for %d bytes", len(s.sums), s.indexed)
	}
	return d
}

// checkDigests fails unless what s would save is what the check of the
// index computes from f, and (kept) s kept its sums up with what it read.
func checkDigests(t *testing.T, what string, s *Session, f io.ReaderAt, kept bool) {
	t.Helper()
	want, err := fileDigests(f, 0, s.indexed)
	if err != nil {
		t.Fatal(err)
	}
	if got := savedDigests(t, s, f); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: saved %v\nthe check computes %v", what, got, want)
	}
	if kept && s.summed != want.summed {
		t.Fatalf("%s: the session summed up to %d of %d, not %d", what, s.summed, s.indexed, want.summed)
	}
}

// writeData writes data to a file named s.jsonl in a directory of its own.
func writeData(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every way of reaching a file (one pass, a pass then appends, passes cut
// anywhere, an unfinished last line ended, sessions in memory) leaves the
// session with the digests that the check computes from the file.
func TestDigestsEveryWay(t *testing.T) {
	data := digestFile(t, 3*blockBytes+blockBytes/3, 1)
	t.Run("one pass", func(t *testing.T) {
		s, err := Load(writeData(t, data))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkDigests(t, "pass", s, memReader(data), true)
	})
	t.Run("appends", func(t *testing.T) {
		cut := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
		path := writeData(t, data[:cut])
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for i := range 50 {
			if _, err := s.Append(&MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: fmt.Sprint("more ", i)}}, Timestamp: 1}}); err != nil {
				t.Fatal(err)
			}
		}
		f, _ := os.Open(path)
		defer f.Close()
		checkDigests(t, "appends", s, f, true)
	})
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		t.Run(fmt.Sprint("cut ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2))
			head := bytes.IndexByte(data, '\n') + 1
			cuts := []int{head + rng.IntN(len(data)-head)}
			for range 8 {
				cuts = append(cuts, rng.IntN(len(data)+1))
			}
			cuts = append(cuts, len(data))
			slices.Sort(cuts[1:])
			cuts = append(cuts[:1], slices.DeleteFunc(cuts[1:], func(c int) bool { return c < cuts[0] })...)
			path := writeData(t, data[:cuts[0]])
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			checkDigests(t, fmt.Sprint("cut at ", cuts[0]), s, f, true)
			for i, c := range cuts[1:] {
				if _, err := f.Write(data[cuts[i]:c]); err != nil {
					t.Fatal(err)
				}
				if err := s.readMore(f, int64(c)); err != nil {
					t.Fatal(err)
				}
				checkDigests(t, fmt.Sprint("cuts ", cuts[:i+2]), s, f, true)
			}
		})
	}
	t.Run("unfinished line ended", func(t *testing.T) {
		for _, rest := range []string{" \n", "x\n", "\n\n{\"type\":\"custom\"}\n", "  \u00a0\n{bad\n"} {
			// The last line ends without a newline, and is an entry.
			d := append(bytes.Clone(data), `{"type":"custom","id":"00abcdef"}`...)
			path := writeData(t, d)
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !s.midLine {
				t.Fatal("the last line should be unfinished")
			}
			f, _ := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
			checkDigests(t, "unfinished", s, f, true)
			f.WriteString(rest)
			if err := s.readMore(f, int64(len(d)+len(rest))); err != nil {
				t.Fatal(err)
			}
			checkDigests(t, fmt.Sprintf("ended with %q", rest), s, f, true)
			f.Close()
			s.Close()
		}
	})
	for _, end := range []string{`{"type":"torn`, `{"type":"custom","id":"00abcdef"}`} {
		// A torn or unfinished last line, ended by an append; then lines
		// another process appended, read before the next append.
		t.Run("append after "+end, func(t *testing.T) {
			path := writeData(t, append(bytes.Clone(data), end...))
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f, _ := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
			defer f.Close()
			add := func() {
				if _, err := s.Append(&MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: "more"}}, Timestamp: 1}}); err != nil {
					t.Fatal(err)
				}
			}
			add()
			checkDigests(t, "appended after "+end, s, f, false)
			f.WriteString("{\"type\":\"custom\",\"id\":\"00000bad\"}\n\n")
			add()
			checkDigests(t, "appended after another's", s, f, false)
		})
	}
	t.Run("memory", func(t *testing.T) {
		s, err := Create("", Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			if _, err := s.Append(&MessageEntry{Message: &llm.UserMessage{Content: []llm.Content{llm.Text{Text: fmt.Sprint("q ", i)}}, Timestamp: 1}}); err != nil {
				t.Fatal(err)
			}
		}
		checkDigests(t, "created", s, memReader(s.src.cur.Load().mem), true)
		f, err := s.Fork("", s.LeafID(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkDigests(t, "forked", f, memReader(f.src.cur.Load().mem), true)
	})
}

// changeAt returns data with one change at i of the given kind, or nil
// when that kind does not apply there: a byte of a line's text changed, a
// newline turned into a space, white space into a newline or into text,
// a blank line added.
func changeAt(data []byte, i int, kind int) []byte {
	d := bytes.Clone(data)
	switch c := d[i]; kind {
	case 0:
		if c == '\n' || c == ' ' || c == '\t' || c == '\r' {
			return nil
		}
		d[i] = c ^ 0x40
		if d[i] == '\n' || d[i] == ' ' {
			d[i] = c ^ 0x41
		}
	case 1:
		if c != '\n' {
			return nil
		}
		d[i] = ' '
	case 2:
		if c != ' ' && c != '\t' && c != '\r' {
			return nil
		}
		d[i] = '\n'
	case 3:
		if c != ' ' && c != '\t' && c != '\r' {
			return nil
		}
		d[i] = 'z'
	case 4:
		if i > 0 && d[i-1] != '\n' {
			return nil
		}
		d = slices.Insert(d, i, '\n')
	}
	return d
}

// A change anywhere in the part indexed that the index would not describe
// (a line's text, where a line starts or ends, how many lines there are)
// changes the digests the check computes.
func TestDigestsSeeChanges(t *testing.T) {
	small := digestFile(t, 6000, 7)
	big := digestFile(t, 2*blockBytes+blockBytes/2, 8)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, data := range [][]byte{small, big} {
		want, err := fileDigests(memReader(data), 0, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		at := func(yield func(int) bool) {
			if len(data) < 10000 {
				for i := range data {
					if !yield(i) {
						return
					}
				}
				return
			}
			for range 60 {
				if !yield(rng.IntN(len(data))) {
					return
				}
			}
		}
		tried := 0
		for i := range at {
			for kind := range 5 {
				d := changeAt(data, i, kind)
				if d == nil {
					continue
				}
				tried++
				got, err := fileDigests(memReader(d), 0, int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) == fmt.Sprint(want) {
					t.Fatalf("change %d at %d of %d (%q) not seen", kind, i, len(data), data[max(i-10, 0):min(i+10, len(data))])
				}
			}
		}
		if tried < 60 {
			t.Fatalf("only %d changes tried", tried)
		}
	}
}

// The check on a file whose index the stamp cannot vouch for finds a
// one-byte change made under it, and trusts the file unchanged.
func TestDigestsMatch(t *testing.T) {
	data := digestFile(t, 2*blockBytes+100, 10)
	path := writeData(t, data)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := savedDigests(t, s, memReader(data))
	c := &cached{indexed: s.indexed, blocks: d.sums, summed: d.summed, tail: d.tail}
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	defer f.Close()
	if !digestsMatch(f, c) {
		t.Fatal("the unchanged file does not match")
	}
	i := blockBytes + 17
	f.WriteAt([]byte{data[i] ^ 1}, int64(i))
	if digestsMatch(f, c) {
		t.Fatal("a changed file matches")
	}
}

// referenceDigests computes the digests of data's lines one line at a
// time, as lineTerm defines them, in blocks of the given size.
func referenceDigests(data []byte, block int64) digests {
	d := digests{summed: int64(len(data))}
	for off := 0; off < len(data); {
		line, _, terminated := bytes.Cut(data[off:], []byte{'\n'})
		text := bytes.TrimSpace(line)
		term := blankTerm(int64(off))
		if len(text) > 0 {
			term = lineTerm(int64(off+cap(line)-cap(text)), len(text), checksum(text))
		}
		if !terminated {
			d.summed, d.tail = int64(off), term
			break
		}
		d.sums = addDigest(d.sums, int64(off)/block, term)
		off += len(line) + 1
	}
	return d
}

// withoutZeros is sums without the zeros at its end.
func withoutZeros(sums []uint64) []uint64 {
	for len(sums) > 0 && sums[len(sums)-1] == 0 {
		sums = sums[:len(sums)-1]
	}
	return sums
}
