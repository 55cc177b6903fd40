package compaction

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

func TestParseDetails(t *testing.T) {
	tests := []struct {
		in   string
		want Details
		ok   bool
	}{
		{`{"readFiles":["a","b"],"modifiedFiles":["c"]}`, Details{ReadFiles: []string{"a", "b"}, ModifiedFiles: []string{"c"}}, true},
		{`{"readFiles":"a","modifiedFiles":[1,"x",null,{"y":1}],"other":{"deep":[1]}}`, Details{ModifiedFiles: []string{"x"}}, true},
		{`{"readFiles":[],"modifiedFiles":[],"summarizer":"deterministic","deterministicReason":"offline"}`, Details{ReadFiles: []string{}, ModifiedFiles: []string{}, Summarizer: "deterministic", DeterministicReason: "offline"}, true},
		{`{"summarizer":5}`, Details{}, true},
		{`[1,2]`, Details{}, false},
		{`"str"`, Details{}, false},
		{`{"readFiles":[`, Details{}, false},
		{``, Details{}, false},
	}
	for _, tc := range tests {
		got, ok := ParseDetails(jsontext.Value(tc.in))
		if ok != tc.ok || !slices.Equal(got.ReadFiles, tc.want.ReadFiles) || !slices.Equal(got.ModifiedFiles, tc.want.ModifiedFiles) ||
			got.Summarizer != tc.want.Summarizer || got.DeterministicReason != tc.want.DeterministicReason {
			t.Errorf("ParseDetails(%s) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	if got := string(Details{}.Encode()); got != `{"readFiles":[],"modifiedFiles":[]}` {
		t.Errorf("empty details encode as %s", got)
	}
}

// FuzzParseDetails: any input reads without panicking, and what it reads
// survives Encode and ParseDetails unchanged.
func FuzzParseDetails(f *testing.F) {
	for _, s := range []string{`{"readFiles":["a"],"modifiedFiles":["b"]}`, `{"readFiles":[1,"\ud800"]}`, `{"summarizer":"deterministic"}`, `[]`, `{`, `null`, `{"readFiles":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, ok := ParseDetails(data)
		if !ok {
			return
		}
		again, ok := ParseDetails(d.Encode())
		if !ok {
			t.Fatalf("re-encoded details do not parse: %s", d.Encode())
		}
		if !slices.Equal(again.ReadFiles, d.ReadFiles) && len(d.ReadFiles)+len(again.ReadFiles) > 0 ||
			!slices.Equal(again.ModifiedFiles, d.ModifiedFiles) && len(d.ModifiedFiles)+len(again.ModifiedFiles) > 0 ||
			again.Summarizer != d.Summarizer || again.DeterministicReason != d.DeterministicReason {
			t.Fatalf("round trip changed %+v into %+v", d, again)
		}
	})
}

// TestPreparationJSON: a preparation goes to hooks as JSON with pi's names
// and comes back with its messages decoded by role.
func TestPreparationJSON(t *testing.T) {
	b := newBuilder(t).parse("u0:40 a1:40!read=x.go r2:40 b3:40 c4:40 u5:40 a6:8!edit=y.go r7:400 a8:40")
	p := mustPrepare(t, b.path, keep(50))
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"firstKeptEntryId":"a8"`, `"messagesToSummarize":[{"role":"user"`, `"turnPrefixMessages":[{"role":"user"`,
		`"isSplitTurn":true`, `"tokensBefore":`, `"fileOps":{"read":["x.go"],"written":[],"edited":["y.go"]}`,
		`"settings":{"enabled":true,"reserveTokens":16384,"keepRecentTokens":50}`, `{"role":"bashExecution"`, `{"role":"custom"`} {
		if !strings.Contains(string(data), name) {
			t.Errorf("JSON lacks %s:\n%s", name, data)
		}
	}
	var back Preparation
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(&back)
	if string(again) != string(data) {
		t.Errorf("round trip differs:\n%s\n%s", data, again)
	}
	if got := ids(t, back.TurnPrefixMessages); !slices.Equal(got, ids(t, p.TurnPrefixMessages)) {
		t.Errorf("turn prefix %v", got)
	}
	// A hook's replacement arrays: empty history, an unknown role kept.
	var hooked Preparation
	err = json.Unmarshal([]byte(`{"firstKeptEntryId":"a8","messagesToSummarize":[],"turnPrefixMessages":[{"role":"user","content":"only this","timestamp":1},{"role":"system","content":"x"}],"isSplitTurn":true,"tokensBefore":5,"fileOps":{"read":["b","a","b"]},"settings":{"enabled":true,"reserveTokens":100,"keepRecentTokens":1}}`), &hooked)
	if err != nil {
		t.Fatal(err)
	}
	if len(hooked.TurnPrefixMessages) != 2 || hooked.TurnPrefixMessages[1].Role() != "system" || !slices.Equal(hooked.FileOps.Read, []string{"a", "b"}) {
		t.Errorf("hooked = %+v", hooked)
	}
	if err := json.Unmarshal([]byte(`{"messagesToSummarize":[{"content":"no role"}]}`), &hooked); err == nil || !strings.Contains(err.Error(), "messagesToSummarize[0]") {
		t.Errorf("a message without a role: %v", err)
	}
}

// FuzzPreparationJSON: decoding never panics; what decodes re-encodes to a
// fixed point.
func FuzzPreparationJSON(f *testing.F) {
	f.Add([]byte(`{"firstKeptEntryId":"a","messagesToSummarize":[{"role":"user","content":"hi","timestamp":1}],"turnPrefixMessages":[],"isSplitTurn":false,"tokensBefore":3,"fileOps":{"read":["x"]},"settings":{"enabled":true,"reserveTokens":1,"keepRecentTokens":2}}`))
	f.Add([]byte(`{"messagesToSummarize":[{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"read","arguments":{"path":"p"}}]}]}`))
	f.Add([]byte(`{"turnPrefixMessages":[{"role":"bashExecution","command":"ls","output":"","exitCode":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Preparation
		if json.Unmarshal(data, &p) != nil {
			return
		}
		once, err := json.Marshal(&p)
		if err != nil {
			return // e.g. a value that cannot be written back as it was read
		}
		var q Preparation
		if err := json.Unmarshal(once, &q); err != nil {
			t.Fatalf("re-encoded preparation does not decode: %v\n%s", err, once)
		}
		twice, err := json.Marshal(&q)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("not a fixed point:\n%s\n%s", once, twice)
		}
	})
}

// FuzzDeterministicSummary: merging any previous summary with a span never
// panics, keeps the format, stays within its bound and is stable when its
// own output is merged again (a second offline compaction with nothing new
// does not grow the text without bound).
func FuzzDeterministicSummary(f *testing.F) {
	f.Add("## Goal\n- ship\n\n## Next Steps\n1. test", "please never push. Always test.", 400)
	f.Add("", "", 50)
	f.Add("---\n**x**\n## Unknown\n- y\n<read-files>\na\n</read-files>", "fix\n\nit", 10)
	f.Fuzz(func(t *testing.T, previous, request string, limit int) {
		limit = 50 + abs(limit)%5000
		msgs := spanOf(request)
		got := deterministicSummary(msgs, previous, "", "fuzz", limit, nil)
		if n := llm.UTF16Len(got); n > limit*4 {
			t.Fatalf("summary of %d units exceeds %d", n, limit*4)
		}
		if !strings.Contains(got, "## Goal") && llm.UTF16Len(got) > 400 {
			t.Fatalf("format lost:\n%s", got)
		}
	})
}

func spanOf(request string) []session.Message {
	return []session.Message{userMsg(llm.Text{Text: request}), assistantMsg(llm.Text{Text: "ok"}, call("c", "read", `{"path":"p"}`)), resultMsg("c", "read", "x", true)}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
