package session_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"testing/iotest"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/session/sessiontest"
)

// A version-3 file loaded and written back is byte-identical.
func TestRoundTripGenerated(t *testing.T) {
	for seed := range uint64(6) {
		o := sessiongen.Options{Entries: 400 + int(seed)*150, Seed: seed, BranchRate: 0.1, ContextWindow: 30_000, KeepRecentTokens: 4_000, ReserveTokens: 2_000}
		data := sessiongen.Bytes(o)
		if !bytes.Equal(data, sessiongen.Bytes(o)) {
			t.Fatal("generator is not deterministic")
		}
		s, err := session.Parse("gen", data)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Warnings()) != 0 || s.Len() != o.Entries {
			t.Fatalf("seed %d: %d entries, warnings %v", seed, s.Len(), s.Warnings())
		}
		if !bytes.Equal(bytesOf(t, s), data) {
			t.Fatalf("seed %d: round trip differs", seed)
		}
		// Every entry decodes, and the context at every leaf builds.
		for _, e := range s.Entries() {
			if _, err := e.Payload(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		for _, leaf := range s.Leaves() {
			if _, err := s.Context(leaf.ID); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		if seed == 0 && len(s.Leaves()) < 2 {
			t.Errorf("generated session has no branches")
		}
	}
}

func TestGeneratedCompactions(t *testing.T) {
	o := sessiongen.Options{Entries: 3000, Seed: 3, ContextWindow: 40_000, KeepRecentTokens: 5_000, ReserveTokens: 4_000, BranchRate: 0.05}
	s, err := session.Parse("gen", sessiongen.Bytes(o))
	if err != nil {
		t.Fatal(err)
	}
	compactions := 0
	for _, e := range s.Entries() {
		if e.Type != session.TypeCompaction {
			continue
		}
		compactions++
		path := s.Path(e.ID)
		if session.KeptStart(path, len(path)-1) < 0 {
			t.Errorf("compaction %s keeps an entry that is not on its path", e.ID)
		}
		p, _ := e.Payload()
		var d struct {
			ReadFiles     []string `json:"readFiles"`
			ModifiedFiles []string `json:"modifiedFiles"`
		}
		if err := jsonUnmarshal(p.(*session.CompactionEntry).Details, &d); err != nil || d.ReadFiles == nil {
			t.Errorf("details %s: %v", p.(*session.CompactionEntry).Details, err)
		}
	}
	if compactions < 3 {
		t.Errorf("%d compactions", compactions)
	}
	tail := sessiongen.Bytes(sessiongen.Options{Entries: 200, Seed: 1, TrailingHugeResults: 3, KeepRecentTokens: 2000})
	ts, _ := session.Parse("tail", tail)
	ctx, _ := ts.Context("")
	n := len(ctx.Messages)
	for _, m := range ctx.Messages[n-3:] {
		if m.Role() != "toolResult" || session.EstimateTokens(m) <= 2000 {
			t.Errorf("trailing result %s of %d tokens", m.Role(), session.EstimateTokens(m))
		}
	}
	if ts.Len() != 200 {
		t.Errorf("%d entries", ts.Len())
	}
}

// Crash test: a session cut at every byte of its last three entries and at
// random offsets elsewhere loads every complete entry and reports the torn
// tail; appending then gives a file whose entries all load, the new one
// last and whole.
func TestTruncatedAtEveryOffset(t *testing.T) {
	data := sessiongen.Bytes(sessiongen.Options{Entries: 120, Seed: 9, HugeRate: -1, ImageRate: -1, SizeScale: 0.25})
	lineEnds := []int{}
	for i, c := range data {
		if c == '\n' {
			lineEnds = append(lineEnds, i+1)
		}
	}
	headerEnd := lineEnds[0]
	start := lineEnds[len(lineEnds)-4]
	var offsets []int
	for off := start; off <= len(data); off++ {
		offsets = append(offsets, off)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 150 {
		offsets = append(offsets, rng.IntN(start))
	}
	dir := t.TempDir()
	for _, off := range offsets {
		cut := data[:off]
		complete := 0 // complete entry lines in cut
		for _, e := range lineEnds[1:] {
			if e <= off {
				complete++
			}
		}
		torn := off > 0 && cut[len(cut)-1] != '\n'
		path := filepath.Join(dir, fmt.Sprintf("cut-%d.jsonl", off))
		if err := os.WriteFile(path, cut, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := session.Load(path)
		if off < headerEnd {
			// No complete header: not a session, and left alone.
			if err == nil && off < headerEnd-1 {
				t.Fatalf("offset %d: a torn header loaded", off)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, cut) {
				t.Fatalf("offset %d: file changed", off)
			}
			continue
		}
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		// A last line cut exactly before its newline is whole.
		wantEntries := complete
		if torn && off == lineEnds[complete+1]-1 {
			wantEntries++
			torn = false
		}
		if s.Len() != wantEntries {
			t.Fatalf("offset %d: %d entries, want %d", off, s.Len(), wantEntries)
		}
		if s.TornTail() != torn {
			t.Fatalf("offset %d: torn tail %v, want %v (warnings %v)", off, s.TornTail(), torn, s.Warnings())
		}
		o, err := session.Open(path)
		if err != nil {
			t.Fatalf("offset %d: open: %v", off, err)
		}
		e, err := o.Append(&session.CustomEntry{CustomType: "after-crash", Data: jsontext.Value(`{"ok":true}`)})
		if err != nil {
			t.Fatalf("offset %d: append: %v", off, err)
		}
		o.Close()
		r, err := session.Load(path)
		if err != nil {
			t.Fatalf("offset %d: reload: %v", off, err)
		}
		if r.Len() != wantEntries+1 || r.Leaf().ID != e.ID || r.TornTail() {
			t.Fatalf("offset %d: after append %d entries (want %d), leaf %s, warnings %v", off, r.Len(), wantEntries+1, r.LeafID(), r.Warnings())
		}
		// The session that appended reads as the file does: line numbers,
		// the torn line now an ordinary bad one.
		if off%11 == 0 || off >= len(data)-3 || wantEntries != complete {
			sameSession(t, fmt.Sprintf("offset %d, the appending session", off), o, r)
		}
		for _, w := range r.Warnings() {
			if w.Kind != session.WarnMalformed || !torn {
				t.Fatalf("offset %d: unexpected warning %v", off, w)
			}
		}
		after, _ := os.ReadFile(path)
		if !bytes.HasPrefix(after, cut) || !bytes.HasSuffix(after, append(append([]byte{}, sessiontest.Line(t, e)...), '\n')) {
			t.Fatalf("offset %d: the append changed earlier bytes or is not a whole line", off)
		}
		os.Remove(path)
	}
}

// The helper process of TestConcurrentAppends: it appends
// PRIME_TEST_APPENDS entries to PRIME_TEST_SESSION.
func TestMain(m *testing.M) {
	if path := os.Getenv("PRIME_TEST_SESSION"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("PRIME_TEST_APPENDS"))
		if err := appendMany(path, n, os.Getenv("PRIME_TEST_WRITER")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	removeBenchFiles()
	os.Exit(code)
}

func appendMany(path string, n int, writer string) error {
	s, err := session.Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	pad := bytes.Repeat([]byte("x"), 3000) // long lines make torn writes likelier
	for i := range n {
		data := fmt.Sprintf(`{"writer":%q,"i":%d,"pad":%q}`, writer, i, pad)
		if _, err := s.Append(&session.CustomEntry{CustomType: "stress", Data: jsontext.Value(data)}); err != nil {
			return err
		}
	}
	return nil
}

// Two real processes append 1,000 entries each to one session: the file
// holds 2,000 whole, valid lines with unique ids.
func TestConcurrentAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	path := filepath.Join(t.TempDir(), "shared.jsonl")
	s, _ := session.Create(path, session.Options{CWD: "/tmp"})
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	const n = 1000
	var cmds []*exec.Cmd
	for _, w := range []string{"A", "B"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "PRIME_TEST_SESSION="+path, "PRIME_TEST_APPENDS="+strconv.Itoa(n), "PRIME_TEST_WRITER="+w)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if stderr.Len() > 0 {
				t.Logf("writer %s: %s", w, stderr.String())
			}
		})
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != 2*n+1 {
		t.Fatalf("%d lines, want %d", len(lines), 2*n+1)
	}
	for i, l := range lines {
		if !jsontext.Value(l).IsValid() {
			t.Fatalf("line %d is not valid JSON", i+1)
		}
	}
	r, err := session.Load(path)
	if err != nil || len(r.Warnings()) != 0 || r.Len() != 2*n {
		t.Fatalf("load: %v, %d entries, warnings %v", err, r.Len(), r.Warnings())
	}
	seen := map[string]bool{}
	count := map[string]int{}
	for _, e := range r.Entries() {
		if seen[e.ID] {
			t.Fatalf("duplicate id %s", e.ID)
		}
		seen[e.ID] = true
		p, _ := e.Payload()
		var d struct {
			Writer string `json:"writer"`
		}
		jsonUnmarshal(p.(*session.CustomEntry).Data, &d)
		count[d.Writer]++
	}
	if count["A"] != n || count["B"] != n {
		t.Errorf("entries per writer: %v", count)
	}
}

// Load decodes large files while reading them; it must agree with Parse on
// every entry and warning, garbage and torn tail included.
func TestLoadLargeMatchesParse(t *testing.T) {
	data := sessiongen.Bytes(sessiongen.Options{Entries: 9000, Seed: 4})
	if len(data) < 10<<20 {
		t.Fatalf("only %d bytes; the streaming path needs more", len(data))
	}
	// Garbage lines in the middle and a torn tail.
	mid := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	data = append(append(append([]byte{}, data[:mid]...), "{broken\n\n"...), data[mid:]...)
	data = append(data, `{"type":"message","id":"torn"`...)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	streamed, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := session.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if streamed.Len() != 9000 || !streamed.TornTail() || len(streamed.Warnings()) != 2 {
		t.Fatalf("%d entries, warnings %v", streamed.Len(), streamed.Warnings())
	}
	if fmt.Sprint(streamed.Warnings()) != fmt.Sprint(parsed.Warnings()) {
		t.Errorf("warnings differ:\n%v\n%v", streamed.Warnings(), parsed.Warnings())
	}
	for i, e := range streamed.Entries() {
		p := parsed.Entries()[i]
		if e.ID != p.ID || e.Line != p.Line || !bytes.Equal(sessiontest.Line(t, e), sessiontest.Line(t, p)) {
			t.Fatalf("entry %d differs: %s line %d vs %s line %d", i, e.ID, e.Line, p.ID, p.Line)
		}
	}
	notSession := filepath.Join(t.TempDir(), "big.txt")
	os.WriteFile(notSession, bytes.Repeat([]byte(`{"hello":"world"}`+"\n"), 1<<20), 0o600)
	if _, err := session.Load(notSession); err == nil {
		t.Error("a large non-session file loaded")
	}
	before, _ := os.ReadFile(notSession)
	if _, err := session.Open(notSession); err == nil {
		t.Error("a large non-session file opened")
	}
	if after, _ := os.ReadFile(notSession); !bytes.Equal(before, after) {
		t.Error("opening a large non-session file changed it")
	}
}

// Open reads a large file as Load does (while reading it) and appends to
// it: the entries agree with Parse, and the file is its old bytes and the
// new line.
func TestOpenLarge(t *testing.T) {
	data := sessiongen.Bytes(sessiongen.Options{Entries: 9000, Seed: 5})
	if len(data) < 10<<20 {
		t.Fatalf("only %d bytes; the streaming path needs more", len(data))
	}
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parsed, err := session.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != parsed.Len() || s.LeafID() != parsed.LeafID() || !bytes.Equal(bytesOf(t, s), data) {
		t.Fatalf("Open: %d entries, leaf %s; Parse: %d, %s", s.Len(), s.LeafID(), parsed.Len(), parsed.LeafID())
	}
	e, err := s.Append(&session.LabelEntry{TargetID: s.LeafID(), Label: "big"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append(bytes.Clone(data), sessiontest.Line(t, e)...), '\n'); !bytes.Equal(got, want) {
		t.Errorf("file after the append: %d bytes, want %d", len(got), len(want))
	}
}

// readAll sizes its buffer from the expected size but reads whatever is
// there: more (a file that grew since its size was taken), less, or an
// error.
func TestReadAllSized(t *testing.T) {
	text := bytes.Repeat([]byte("0123456789"), 1000)
	for _, size := range []int{-1, 0, 1, 5000, 10000, 20000} {
		got, err := session.ReadAll(iotest.OneByteReader(bytes.NewReader(text)), size)
		if err != nil || !bytes.Equal(got, text) {
			t.Errorf("size %d: %d bytes, %v", size, len(got), err)
		}
	}
	if _, err := session.ReadAll(iotest.TimeoutReader(bytes.NewReader(text)), 100); err == nil {
		t.Error("a read error was not reported")
	}
}

// Warnings about ids and links are kept in line order with those about
// lines, and a torn tail is reported whatever else was found.
func TestWarningsInLineOrder(t *testing.T) {
	data := `{"type":"session","version":3,"id":"s"}` + "\n" +
		`{"type":"custom","id":"a","parentId":null,"timestamp":"t","customType":"x"}` + "\n" +
		"{broken\n" +
		`{"type":"custom","id":"a","parentId":null,"timestamp":"t","customType":"x"}` + "\n" +
		`{"type":"custom","id":"b"`
	s, err := session.Parse("x.jsonl", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []session.WarningKind
	var lines []int
	for _, w := range s.Warnings() {
		kinds = append(kinds, w.Kind)
		lines = append(lines, w.Line)
	}
	want := []session.WarningKind{session.WarnMalformed, session.WarnDuplicateID, session.WarnTornTail}
	if fmt.Sprint(kinds) != fmt.Sprint(want) || fmt.Sprint(lines) != "[3 4 5]" {
		t.Errorf("warnings %v on lines %v, want %v on [3 4 5]", kinds, lines, want)
	}
	if !s.TornTail() {
		t.Error("torn tail not reported next to a duplicate id")
	}
}
