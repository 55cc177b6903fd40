package session

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzCoerceLine: coercing any line never panics, and what it writes is
// one valid JSON value whose coerced fields are of their kind.
func FuzzCoerceLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"compaction","summary":42,"tokensBefore":"10","fromHook":"x"}`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":true}],"usage":{"input":"5","cost":{"total":"1.5"}}}}`,
		`{"type":"custom","data":{"summary":1}}`,
		`{"summary":{"a":[1,2]},"message":{"details":{"text":3}}}`,
		`[1,2]`, `{"a":`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		out, notes, changed := coerceLine(line)
		if !changed {
			return
		}
		if len(notes) == 0 {
			t.Fatal("changed without a note")
		}
		if !jsontext.Value(out).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
			t.Fatalf("coerced %q into invalid JSON %q", line, out)
		}
		if _, _, again := coerceLine(out); again {
			t.Fatalf("coercing %q twice changes it again", line)
		}
	})
}
