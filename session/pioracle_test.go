package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/pioracle"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/session/sessiontest"
)

// TestForkPiOracle forks generated sessions at every leaf with Prime and
// with pi 1.6's createBranchedSession (internal/pioracle/harness), and checks that
// both sessions hold the same lines: the path's entries byte for byte, and
// label entries that say the same (their ids are random). It runs only
// when PRIME_PIORACLE names the oracle's wrapper:
//
//	PRIME_PIORACLE=$PWD/internal/pioracle/harness/pioracle go test ./session -run PiOracle -v
func TestForkPiOracle(t *testing.T) {
	pioracle.Path(t)
	dir := t.TempDir()
	cases := 0
	for seed := range uint64(3) {
		data := sessiongen.Bytes(sessiongen.Options{Entries: 400, Seed: seed})
		path := filepath.Join(dir, "gen.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		// Every leaf, every label entry, and points along the way.
		leaves := s.Leaves()
		for i, e := range s.Entries() {
			if e.Type == session.TypeLabel || i%50 == 49 {
				leaves = append(leaves, e)
			}
		}
		for _, leaf := range leaves {
			var pi struct {
				Lines []string `json:"lines"`
			}
			pioracle.Ask(t, &pi, "fork", path, "--leaf", leaf.ID)
			f, err := s.Fork("", leaf.ID, session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := f.Entries()
			if len(got) != len(pi.Lines) {
				t.Fatalf("seed %d leaf %s: %d entries, pi has %d", seed, leaf.ID, len(got), len(pi.Lines))
			}
			for i, e := range got {
				want, have := pi.Lines[i], string(sessiontest.Line(t, e))
				if e.Type == session.TypeLabel {
					// Ids are random; so is the parent of every label
					// after the first.
					want, have = withoutIDs(t, want, i > 0 && got[i-1].Type == session.TypeLabel), withoutIDs(t, have, i > 0 && got[i-1].Type == session.TypeLabel)
				}
				if have != want {
					t.Errorf("seed %d leaf %s, entry %d:\nprime %s\npi    %s", seed, leaf.ID, i, have, want)
				}
			}
			cases++
		}
	}
	t.Logf("%d forks identical to pi's", cases)
}

// withoutIDs returns the JSON object line without its id, and without its
// parentId too when parent is set.
func withoutIDs(t *testing.T, line string, parent bool) string {
	t.Helper()
	var m map[string]jsontext.Value
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "id")
	if parent {
		delete(m, "parentId")
	}
	b, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
