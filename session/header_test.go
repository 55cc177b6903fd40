package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadHeader(t *testing.T) {
	const header = `{"type":"session","version":3,"id":"abc","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}`
	for _, tc := range []struct {
		name, data string
		version    int // 0: an error
	}{
		{"header and entries", header + "\n" + `{"type":"label","id":"1","parentId":null}` + "\n", 3},
		{"header without a newline", header, 3},
		{"older version", `{"type":"session","version":2,"id":"abc"}` + "\n", 2},
		{"no version", `{"type":"session","id":"abc"}` + "\n", 1},
		{"empty", "", 0},
		{"not JSON", "hello\n" + header + "\n", 0},
		{"an entry first", `{"type":"message","id":"1"}` + "\n" + header + "\n", 0},
		{"no id", `{"type":"session","version":3}` + "\n", 0},
		{"too long", `{"type":"session","version":3,"id":"` + strings.Repeat("a", 70<<10) + `"}` + "\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(p, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			h, err := ReadHeader(p)
			switch {
			case tc.version == 0 && err == nil:
				t.Errorf("read %+v, want an error", h)
			case tc.version != 0 && err != nil:
				t.Errorf("error %v, want version %d", err, tc.version)
			case tc.version != 0 && h.Version != tc.version:
				t.Errorf("version %d, want %d", h.Version, tc.version)
			}
		})
	}
	if _, err := ReadHeader(filepath.Join(t.TempDir(), "missing.jsonl")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
