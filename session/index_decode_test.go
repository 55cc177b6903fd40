package session_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/internal/rawmem"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/session/sessiontest"
)

// sameDecoding compares two decoded messages, tool-call arguments by text.
var sameDecoding = cmp.Options{
	cmp.Comparer(func(a, b llm.Arguments) bool { return a.String() == b.String() }),
	cmp.Comparer(func(a, b jsontext.Value) bool { return bytes.Equal(a, b) }),
}

// checkFastDecode decodes raw both ways: when the fast decoder accepts it,
// the general decoder must give the same message. The fast decoder in its
// sharing mode (an entry's bytes) must accept the same and read the same,
// and its message must not change when raw is reused after a copying
// decode.
func checkFastDecode(t *testing.T, raw []byte) (fast bool) {
	t.Helper()
	own := bytes.Clone(raw)
	got, ok := session.DecodeFast(own)
	shared, sharedOK := session.DecodeFastShared(bytes.Clone(raw))
	// Twice into one text arena with a tiny first block: the first
	// message must survive the second's writing.
	arena := session.NewTextArena(8)
	inArena, arenaOK := arena.Decode(bytes.Clone(raw))
	again, againOK := arena.Decode(bytes.Clone(raw))
	if ok != sharedOK || ok != arenaOK || ok != againOK {
		t.Fatalf("fast decoder accepts %q: %v; sharing, %v; in an arena, %v then %v", raw, ok, sharedOK, arenaOK, againOK)
	}
	if !ok {
		return false
	}
	want, err := session.DecodeSlow(raw)
	if err != nil {
		t.Fatalf("fast decoder accepted %q; the general one says %v", raw, err)
	}
	for name, m := range map[string]session.Message{"shared": shared, "arena": inArena, "arena again": again} {
		if diff := cmp.Diff(want, m, sameDecoding); diff != "" {
			t.Fatalf("%s fast decoding of %q differs (-general +fast):\n%s", name, raw, diff)
		}
	}
	clear(own) // the copying decoder's result must not depend on its input
	if diff := cmp.Diff(want, got, sameDecoding); diff != "" {
		t.Fatalf("fast decoding of %q differs (-general +fast):\n%s", raw, diff)
	}
	return true
}

// messagesOf returns the raw message of every message entry of a session
// file.
func messagesOf(t *testing.T, data []byte) [][]byte {
	t.Helper()
	s, err := session.Parse("test", data)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, e := range s.Entries() {
		if e.Type != session.TypeMessage {
			continue
		}
		var w struct {
			Message jsontext.Value `json:"message"`
		}
		if err := jsonUnmarshal(sessiontest.Line(t, e), &w); err != nil {
			t.Fatal(err)
		}
		out = append(out, w.Message)
	}
	return out
}

// fastDecodeFiles returns generated sessions (all generator options) and,
// when present, pi's own files.
func fastDecodeFiles(t *testing.T) map[string][]byte {
	files := pifixtures.ReadAll(t)
	for seed := range uint64(6) {
		files["gen"+string(rune('0'+seed))] = sessiongen.Bytes(sessiongen.Options{
			Entries: 600, Seed: seed, SizeScale: 0.3, ImageRate: 0.1, HugeRate: 0.01, BranchRate: 0.1, TrailingHugeResults: int(seed % 3),
		})
	}
	return files
}

// TestFastDecodeSessions decodes every message of generated sessions (all
// generator options) and of pi's own files both ways, and checks that the
// fast path takes nearly all of them.
func TestFastDecodeSessions(t *testing.T) {
	for name, data := range fastDecodeFiles(t) {
		total, fast := 0, 0
		for _, raw := range messagesOf(t, data) {
			total++
			if checkFastDecode(t, raw) {
				fast++
			}
		}
		t.Logf("%s: %d of %d messages on the fast path", name, fast, total)
		if fast < total*95/100 {
			t.Errorf("%s: only %d of %d messages on the fast path", name, fast, total)
		}
	}
}

// TestTextArena decodes every message of generated sessions and pi's files
// with one text arena whose first block is tiny, then checks each against
// the general decoder: strings made earlier are intact after later ones
// were written into the same blocks or moved on to new ones.
func TestTextArena(t *testing.T) {
	for name, data := range fastDecodeFiles(t) {
		arena := session.NewTextArena(16)
		var raws [][]byte
		var got []session.Message
		for _, raw := range messagesOf(t, data) {
			if m, ok := arena.Decode(raw); ok {
				raws = append(raws, raw)
				got = append(got, m)
			}
		}
		if len(got) == 0 {
			t.Fatalf("%s: nothing decoded", name)
		}
		for i, raw := range raws {
			want, err := session.DecodeSlow(raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got[i], sameDecoding); diff != "" {
				t.Fatalf("%s: message %d differs (-general +arena):\n%s", name, i, diff)
			}
		}
	}
}

// TestFastDecodeEdges pins the shapes the fast decoder leaves to the
// general one, and those it must read exactly like it.
func TestFastDecodeEdges(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		fast bool
	}{
		{`{"role":"user","content":"hi","timestamp":1}`, true},
		{`{"role":"user","content":"","timestamp":"2025-12-03T14:00:00.000Z"}`, true},
		{`{"role":"user","content":null}`, true},
		{`{"role":"user","content":[]}`, true},
		{`{"role":"user","content":["bare",{"type":"text","text":"a\nb\u00e9\ud83d\ude00\"\\\/\b\f\r\t"}]}`, true},
		{`{"role":"user","content":[{"type":"image","data":"aGk=","mimeType":"image/png"}],"timestamp":1.9e3}`, true},
		{`{"role":"user","content":[{"type":"widget","x":[1,{"y":null}]}]}`, true},
		{`{"role":"user","content":[{"text":"no type"}]}`, true},
		{`{"role":"user", "content" : [ "a" , "b" ] , "x" : { } }  `, true},
		{`{"role":"user","content":"a","content":"b"}`, true},
		{`{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s","redacted":true},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go","n":1.50,"o":{"deep":[1e2]}}}],"api":null,"usage":{"input":1,"output":2.7,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"total":0.5,"extra":1}},"stopReason":"toolUse","timestamp":1764770400000}`, true},
		{`{"role":"assistant","usage":null,"usage":{"input":5}}`, true},
		{`{"role":"assistant","usage":{"cost":null}}`, true},
		{`{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"details":{"diff":"-a\n+b"},"details":null,"isError":null,"timestamp":null}`, true},
		{`{"role":"toolResult","content":"x","timestamp":1e400}`, true},
		{`{"role":"assistant","content":[],"stopReason":"stop","timestamp":1,"durationMs":250,"thinkingLevel":"high"}`, true},
		{`{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[],"isError":false,"durationMs":12,"timestamp":2}`, true},
		// Left to the general decoder.
		{`{"role":"bashExecution","command":"ls","output":"","timestamp":1}`, false},
		{`{"content":"x","role":"user"}`, false},
		{`{"role":"user","content":"\ud800"}`, false},
		{"{\"role\":\"user\",\"content\":\"\xff\"}", false},
		{`{"role":"user","content":[{"type":"text","text":null}]}`, false},
		{`{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}`, false},
		{`{"role":"user","content":[1]}`, false},
		{`{"role":"user","content":"x"} x`, false},
		{`{"role":"user","content":"x"},"other":1`, false},
		{`{"role":"assistant","usage":{"input":"5"}}`, false},
		{`{"role":"assistant","usage":{"input":1,"input":2}}`, false},
		{`{"role":"assistant","usage":{"input":1e400}}`, false},
		{`{"role":"assistant","content":[{"type":"toolCall","arguments":"{}"}]}`, false},
		{`{"role":"user","cont\u0065nt":"x"}`, false},
		{`{"role":"user","content":"x`, false},
	} {
		if got := checkFastDecode(t, []byte(tc.raw)); got != tc.fast {
			t.Errorf("fast path for %s: %v, want %v", tc.raw, got, tc.fast)
		}
	}
}

// FuzzFastDecode checks the fast message decoder against the general one:
// whatever it accepts, it reads exactly as the general decoder does.
func FuzzFastDecode(f *testing.F) {
	data := sessiongen.Bytes(sessiongen.Options{Entries: 60, Seed: 3, SizeScale: 0.05, ImageRate: 0.2, HugeRate: -1})
	s, err := session.Parse("seed", data)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range s.Entries() {
		if e.Type == session.TypeMessage {
			if line := sessiontest.Line(f, e); bytes.Contains(line, []byte(`"message":`)) {
				i := bytes.Index(line, []byte(`"message":`))
				f.Add(line[i+len(`"message":`) : len(line)-1])
			}
		}
	}
	for _, s := range []string{
		`{"role":"user","content":"a\u00e9\ud83d\ude00"}`, `{"role":"assistant","usage":{"cost":{"input":1}}}`,
		`{"role":"toolResult","details":[1,2],"isError":true}`, `{"role":"user","content":[{"type":"image"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkFastDecode(t, raw)
	})
}

// BenchmarkDecodeMessages decodes every message of pi's large session with
// the fast decoder and with the general one.
func BenchmarkDecodeMessages(b *testing.B) {
	data, err := os.ReadFile(pifixtures.Path(b, pifixtures.LargeSession))
	if err != nil {
		b.Fatal(err)
	}
	s, err := session.Parse("bench", data)
	if err != nil {
		b.Fatal(err)
	}
	var raws [][]byte
	size := 0
	for _, e := range s.Entries() {
		line := sessiontest.Line(b, e)
		if i := bytes.Index(line, []byte(`,"message":`)); i > 0 && e.Type == session.TypeMessage {
			raw := line[i+len(`,"message":`) : len(line)-1]
			raws = append(raws, raw)
			size += len(raw)
		}
	}
	for _, tc := range []struct {
		name   string
		decode func([]byte) (session.Message, error)
	}{
		{"fast", session.DecodeMessage},
		{"general", session.DecodeSlow},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, raw := range raws {
					if _, err := tc.decode(raw); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// FuzzSharedString checks that a shared string reads as a copy does.
func FuzzSharedString(f *testing.F) {
	for _, s := range []string{"", "a", "plain text", "é\x00\xff"} {
		f.Add([]byte(s), 0, 1)
	}
	f.Fuzz(func(t *testing.T, b []byte, i, j int) {
		if i < 0 || j < i || j > len(b) {
			return
		}
		if got, want := session.SharedString(b[i:j]), string(b[i:j]); got != want {
			t.Fatalf("sharedString(%q) = %q", want, got)
		}
	})
}

// TestEntryMessageShares checks that the message decoded from an entry
// shares the entry's bytes for strings without escapes and for tool-call
// arguments, and copies strings with escapes; the entry's own id and
// timestamp never refer to its line.
func TestEntryMessageShares(t *testing.T) {
	line := `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-12-03T14:00:00.000Z","message":` +
		`{"role":"assistant","content":[{"type":"text","text":"plain words"},{"type":"text","text":"two\nlines"},` +
		`{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"}}],"timestamp":1}}`
	e, err := session.NewEntry([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	raw := sessiontest.Line(t, e)
	within := func(p *byte) bool { return rawmem.Inside(p, raw) }
	if within(&rawmem.StringBytes(e.ID)[0]) || within(&rawmem.StringBytes(e.Timestamp)[0]) {
		t.Error("the entry's id and timestamp keep its line alive")
	}
	m, err := e.Message()
	if err != nil {
		t.Fatal(err)
	}
	c := m.(*llm.AssistantMessage).Content
	if !within(&rawmem.StringBytes(c[0].(llm.Text).Text)[0]) {
		t.Error("plain text does not share the line")
	}
	if txt := c[1].(llm.Text).Text; txt != "two\nlines" || within(&rawmem.StringBytes(txt)[0]) {
		t.Errorf("text with an escape = %q, shared %v", txt, within(&rawmem.StringBytes(txt)[0]))
	}
	if v := c[2].(llm.ToolCall).Arguments.Value(); !within(&v[0]) {
		t.Error("tool-call arguments do not share the line")
	}
}
