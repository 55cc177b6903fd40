package llm_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/pifixtures"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session/sessiongen"
)

// reformatted is the slow path of NewArguments on its own: the value
// reformatted to JSON.stringify's form.
func reformatted(raw []byte) ([]byte, error) {
	a, err := llm.ReformatArguments(bytes.Clone(raw))
	if err != nil {
		return nil, err
	}
	return a.Value(), nil
}

// checkArguments checks NewArguments and AdoptArguments against the
// reformatting on raw, and that whatever the fast check accepts is left
// unchanged by it. It reports whether the fast check accepted raw.
func checkArguments(t *testing.T, raw []byte) bool {
	t.Helper()
	fast := llm.Stringified(raw)
	want, wantErr := reformatted(raw)
	if fast && (wantErr != nil || !bytes.Equal(want, raw)) {
		t.Fatalf("fast check accepts %q; reformatting gives %q, %v", raw, want, wantErr)
	}
	if len(raw) == 0 {
		return fast
	}
	for name, f := range map[string]func([]byte) (llm.Arguments, error){"NewArguments": llm.NewArguments, "AdoptArguments": llm.AdoptArguments} {
		in := bytes.Clone(raw)
		a, err := f(in)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s(%q): error %v, reformatting says %v", name, raw, err, wantErr)
		}
		if err == nil && !bytes.Equal(a.Value(), want) {
			t.Fatalf("%s(%q) = %q, reformatting gives %q", name, raw, a.Value(), want)
		}
	}
	return fast
}

// argumentsIn returns the value of every member named "arguments" in the
// JSON lines of data.
func argumentsIn(t testing.TB, data []byte) [][]byte {
	var out [][]byte
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
		for {
			tok, err := dec.ReadToken()
			if err != nil {
				break
			}
			if tok.Kind() != '"' || tok.String() != "arguments" {
				continue
			}
			// A member name: the object's member count is odd after it.
			if k, n := dec.StackIndex(dec.StackDepth()); k == '{' && n%2 == 1 {
				if dec.PeekKind() == '{' {
					v, err := dec.ReadValue()
					if err != nil {
						break
					}
					out = append(out, bytes.Clone(v))
				}
			}
		}
	}
	return out
}

// sessionFiles returns generated sessions and, when present, pi's files.
func sessionFiles(t testing.TB) map[string][]byte {
	files := pifixtures.ReadAll(t)
	files["gen1"] = sessiongen.Bytes(sessiongen.Options{Entries: 400, Seed: 1, SizeScale: 0.2})
	files["gen2"] = sessiongen.Bytes(sessiongen.Options{Entries: 400, Seed: 2, SizeScale: 0.2})
	return files
}

// TestArgumentsOfSessions checks the arguments of every tool call in
// generated sessions and pi's files, and that the fast check takes all of
// them: pi and Prime store them as JSON.stringify prints them.
func TestArgumentsOfSessions(t *testing.T) {
	for name, data := range sessionFiles(t) {
		args := argumentsIn(t, data)
		if len(args) == 0 {
			t.Fatalf("%s: no tool calls found", name)
		}
		fast := 0
		for _, raw := range args {
			if checkArguments(t, raw) {
				fast++
			}
		}
		t.Logf("%s: %d of %d arguments taken as they are", name, fast, len(args))
		if fast < len(args)*99/100 {
			t.Errorf("%s: only %d of %d arguments taken as they are", name, fast, len(args))
		}
	}
}

func TestStringifiedEdges(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		fast bool
	}{
		{`{}`, true},
		{`[]`, true},
		{`{"path":"a.go","n":12,"neg":-7,"z":0,"ok":true,"no":false,"x":null,"l":[1,[2],{}]}`, true},
		{`{"text":"a\"b\\c\nd\te\rf\bg\fh","u":"é日本` + "\U0001F600" + `"}`, true},
		{`"plain"`, true},
		{`123456789012345`, true},
		{`-12345678901234`, true},
		// Left to the reformatting, whatever it decides.
		{`{ "a":1}`, false},
		{`{"a" :1}`, false},
		{`{"a":1 }`, false},
		{`{"a":1.5}`, false},
		{`{"a":1e3}`, false},
		{`{"a":-0}`, false},
		{`{"a":01}`, false},
		{`1234567890123456`, false},
		{`-123456789012345`, false},
		{`{"a":"\/"}`, false},
		{`{"a":"\u0041"}`, false},
		{`{"a":"\u001f"}`, false},
		{"{\"a\":\"\x01\"}", false},
		{"{\"a\":\"\xff\"}", false},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":1},"c":{"b":2}}`, true},
		{`{"1":1}`, false},
		{`{"a1":1}`, true},
		{`{"a":"b"`, false},
		{`{"a":tru}`, false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`{} `, false},
		{``, false},
	} {
		if got := checkArguments(t, []byte(tc.raw)); got != tc.fast {
			t.Errorf("fast check of %s: %v, want %v", tc.raw, got, tc.fast)
		}
	}
	deep := bytes.Repeat([]byte("["), 100)
	deep = append(deep, bytes.Repeat([]byte("]"), 100)...)
	if checkArguments(t, deep) {
		t.Error("fast check followed 100 levels of nesting")
	}
}

// TestArgumentsAsJavaScriptObjects checks the forms JSON.stringify
// (JSON.parse(raw)) gives objects with repeated names and array-index
// names (as node prints them).
func TestArgumentsAsJavaScriptObjects(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"a":1,"b":2,"a":3}`, `{"a":3,"b":2}`},
		{`{"":"","":0}`, `{"":0}`},
		{`{"b":1,"2":2,"1":3}`, `{"1":3,"2":2,"b":1}`},
		{`{"4294967295":1,"4294967294":2,"x":0}`, `{"4294967294":2,"4294967295":1,"x":0}`},
		{`{"01":1,"1":2,"-1":3}`, `{"1":2,"01":1,"-1":3}`},
		{`[{"a":1,"a":{"b":1,"b":[2]}}]`, `[{"a":{"b":[2]}}]`},
		{`{"a":1,"1":2,"a":3,"0":4}`, `{"0":4,"1":2,"a":3}`},
		{`{ "a" : 1.50, "a\u0062" : "\u0041", "ab": 2 }`, `{"a":1.5,"ab":2}`},
	} {
		a, err := llm.NewArguments([]byte(tc.raw))
		if err != nil || a.String() != tc.want {
			t.Errorf("NewArguments(%s) = %s, %v; want %s", tc.raw, a.String(), err, tc.want)
		}
		checkArguments(t, []byte(tc.raw))
		// Stored in a message, they encode and decode again.
		m := &llm.AssistantMessage{Content: []llm.Content{llm.ToolCall{ID: "c", Name: "n", Arguments: a}}}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		if _, err := llm.DecodeMessage(enc); err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
	}
}

// TestArgumentsLoneSurrogates checks that a lone surrogate, which models
// do emit, stays one: JSON.stringify writes it as a six-character escape,
// and pi's estimates count those characters (issue 8). The answers are
// node's: JSON.stringify(JSON.parse(raw)) and its length.
func TestArgumentsLoneSurrogates(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		units     int
	}{
		{`{"path":"x","s":"a\ud83db"}`, `{"path":"x","s":"a\ud83db"}`, 27},
		{`{"s":"\uDC00x\uD83D\uDE00\\ud83d","\ud800":1, "\ud800" : 2}`, `{"s":"\udc00x` + "\U0001F600" + `\\ud83d","\ud800":2}`, 35},
		{`["\u0001\u001F\/", 1.50, 1e21, "\ud800"]`, `["\u0001\u001f/",1.5,1e+21,"\ud800"]`, 36},
		{`{"a":"\ud83d\ud83d\ude00"}`, `{"a":"\ud83d` + "\U0001F600" + `"}`, 16},
	} {
		a, err := llm.NewArguments([]byte(tc.raw))
		if err != nil || a.String() != tc.want || a.Len() != tc.units {
			t.Errorf("NewArguments(%s) = %s (%d units), %v; want %s (%d)", tc.raw, a.String(), a.Len(), err, tc.want, tc.units)
		}
		if v, err := llm.Stringify([]byte(tc.raw)); err != nil || string(v) != tc.want {
			t.Errorf("Stringify(%s) = %s, %v", tc.raw, v, err)
		}
		checkArguments(t, []byte(tc.raw))
	}
	for _, bad := range []string{`{"a":"\ud800"} x`, `{"a":"\ud800"`, `["\ud800",]`} {
		if _, err := llm.NewArguments([]byte(bad)); err == nil {
			t.Errorf("NewArguments(%s): no error", bad)
		}
	}
}

// TestAdoptArgumentsKeepsInput checks that AdoptArguments keeps stringified
// input itself, and that appending to the value cannot write past it.
func TestAdoptArgumentsKeepsInput(t *testing.T) {
	buf := []byte(`{"path":"a.go"}{"next":1}`)
	raw := buf[:15]
	a, err := llm.AdoptArguments(raw)
	if err != nil {
		t.Fatal(err)
	}
	if v := a.Value(); &v[0] != &raw[0] {
		t.Error("AdoptArguments copied stringified input")
	}
	_ = append(a.Value(), 'x')
	if string(buf[15:]) != `{"next":1}` {
		t.Errorf("append to Value wrote past the arguments: %q", buf)
	}
	b, err := llm.AdoptArguments([]byte(`{ "path" : "a.go" }`))
	if err != nil || b.String() != `{"path":"a.go"}` {
		t.Errorf("AdoptArguments of spaced input = %q, %v", b.String(), err)
	}
}

// FuzzStringified checks the fast check against the reformatting: what it
// accepts, reformatting leaves unchanged, and NewArguments and
// AdoptArguments always agree with the reformatting.
func FuzzStringified(f *testing.F) {
	for _, data := range sessionFiles(f) {
		args := argumentsIn(f, data)
		for _, raw := range args[:min(len(args), 200)] {
			f.Add(raw)
		}
	}
	for _, s := range []string{`{"a":1.0}`, `{"a":-0}`, `"\ud800"`, `{"a":"\u2028"}`, `[1e21]`, `{"a":"<>&"}`, "\"\xef\xbf\xbd\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkArguments(t, raw)
	})
}

// BenchmarkNewArguments reads the arguments of every tool call in pi's
// large session: NewArguments (which takes them as they are), the full
// reformatting it falls back to, and AdoptArguments (no copy).
func BenchmarkNewArguments(b *testing.B) {
	data, err := os.ReadFile(pifixtures.Path(b, pifixtures.LargeSession))
	if err != nil {
		b.Fatal(err)
	}
	args := argumentsIn(b, data)
	size := 0
	for _, a := range args {
		size += len(a)
	}
	for _, tc := range []struct {
		name string
		f    func([]byte) (llm.Arguments, error)
	}{
		{"new", llm.NewArguments},
		{"reformat", func(raw []byte) (llm.Arguments, error) { return llm.ReformatArguments(bytes.Clone(raw)) }},
		{"adopt", llm.AdoptArguments},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, a := range args {
					if _, err := tc.f(a); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
