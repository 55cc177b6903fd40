package session

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// An index whose checksum is right but whose records point outside the
// indexed part, or whose ids do not match its records, is not followed:
// the file is indexed again.
func TestIndexChecked(t *testing.T) {
	dir, idx := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/"}` + "\n")
	parent := ""
	for i := 0; len(data) < 2*cacheMinBytes; i++ {
		id := string(appendHexID(nil, uint32(i*7919+1)))
		if i == 1 {
			id = "" // an entry without an id (record 1)
		}
		line, err := EncodeEntry(id, parent, "2025-12-03T14:00:01.000Z", &CustomEntry{CustomType: "pad", Data: []byte(`"` + strings.Repeat("x", 2000) + `"`)})
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
		parent = id
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := ReadOptions{IndexDir: idx}
	want, err := LoadWith(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	x := newIndexFile(idx, path, fi)
	if x == nil {
		t.Skip("no persistent index on this system")
	}
	good, err := os.ReadFile(x.path)
	if err != nil {
		t.Fatal(err)
	}
	smallLen := int(binary.LittleEndian.Uint32(good[92:]))
	recs := fixedLen + smallLen
	size := recSize
	for name, damage := range map[string]func(b []byte){
		"offset beyond the indexed part":                func(b []byte) { binary.LittleEndian.PutUint64(b[recs+10*size:], 1<<40) },
		"parent beyond the index":                       func(b []byte) { binary.LittleEndian.PutUint32(b[recs+10*size+28:], 1<<30) },
		"an unknown type":                               func(b []byte) { b[recs+10*size+44] = 200 },
		"ids out of order":                              func(b []byte) { b[len(b)-4-8*2+7] ^= 0x80 },
		"an id neither hex, none nor in the side table": func(b []byte) { b[recs+1*size+46] &^= recNoID },
		"an entry's id not the one the ids name":        func(b []byte) { b[recs+10*size+32] ^= 1 },
		"an entry before the one before it":             func(b []byte) { binary.LittleEndian.PutUint32(b[recs+10*size+24:], 3) },
		"ids naming an entry twice": func(b []byte) {
			ids := len(b) - 4 - 8*int(binary.LittleEndian.Uint32(b[100:]))
			copy(b[ids+8*5:ids+8*5+4], b[ids+8*4:ids+8*4+4])
		},
	} {
		bad := append([]byte(nil), good...)
		damage(bad)
		binary.LittleEndian.PutUint32(bad[len(bad)-4:], crc32.Checksum(bad[:len(bad)-4], castagnoli()))
		if _, err := readIndexFile(writeTemp(t, bad)); err == nil {
			t.Errorf("%s: index accepted", name)
		}
		os.WriteFile(x.path, bad, 0o600)
		s, err := LoadWith(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if s.from != ReadWhole || s.Len() != want.Len() || s.LeafID() != want.LeafID() {
			t.Errorf("%s: read %d entries from index %q", name, s.Len(), s.from)
		}
	}
	os.WriteFile(x.path, good, 0o600)
	if s, err := LoadWith(path, opts); err != nil || s.from == ReadWhole || s.Len() != want.Len() {
		t.Errorf("the undamaged index is not used: %v, %q", err, s.from)
	}
}

func writeTemp(t *testing.T, b []byte) string {
	p := filepath.Join(t.TempDir(), "x.idx")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzIndexFile checks the index file reader on arbitrary bytes (seeded
// with real index files and damaged ones): it never panics, and what it
// accepts stays within its own bounds.
func FuzzIndexFile(f *testing.F) {
	dir, idx := f.TempDir(), f.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	data := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2025-12-03T14:00:00.000Z","cwd":"/"}` + "\n")
	parent := ""
	for i := 0; len(data) < cacheMinBytes+1000; i++ {
		id := string(appendHexID(nil, uint32(i+1)))
		line, _ := EncodeEntry(id, parent, "2025-12-03T14:00:01.000Z", &CustomEntry{CustomType: "pad", Data: []byte(`"` + strings.Repeat("x", 4000) + `"`)})
		data = append(append(data, line...), '\n')
		parent = id
	}
	data = append(data, "{bad\n"+`{"type":"label","id":"odd-id","parentId":null,"timestamp":"x","targetId":"00000001","label":"l"}`+"\n"...)
	os.WriteFile(path, data, 0o600)
	if _, err := LoadWith(path, ReadOptions{IndexDir: idx}); err != nil {
		f.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if x := newIndexFile(idx, path, fi); x != nil {
		good, _ := os.ReadFile(x.path)
		f.Add(good)
		f.Add(good[:fixedLen+20])
	}
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := readIndexFile(writeTemp(t, b))
		if err != nil {
			return
		}
		for i := range c.recs {
			if r := &c.recs[i]; r.off+int64(r.n) > c.indexed || r.parent >= int32(len(c.recs)) {
				t.Fatalf("accepted a record outside the index: %+v", r)
			}
		}
	})
}

// FuzzISO checks that parseISO reads exactly what appendISO writes, which
// is what FormatTime writes, and agrees with jsonwire.ISOMillis.
// TestParseISORejects checks that every byte of a timestamp matters: each
// place turned into a byte just outside what it may hold is refused.
func TestParseISORejects(t *testing.T) {
	const good = "2024-02-29T23:59:59.999Z"
	if _, ok := parseISO([]byte(good)); !ok {
		t.Fatalf("parseISO(%q) refused", good)
	}
	for k := range len(good) {
		for _, c := range []byte{'0' - 1, '9' + 1, good[k] | 0x80, good[k] ^ 0x20, 0} {
			if c == good[k] {
				continue
			}
			b := []byte(good)
			b[k] = c
			if v, ok := parseISO(b); ok {
				t.Errorf("parseISO(%q) = %d, not refused", b, v)
			}
		}
	}
	for _, bad := range []string{"2023-02-29T00:00:00.000Z", "2024-13-01T00:00:00.000Z", "2024-00-01T00:00:00.000Z",
		"2024-04-31T00:00:00.000Z", "2024-01-01T24:00:00.000Z", "2024-01-01T00:60:00.000Z", "2024-01-01T00:00:60.000Z",
		"2024-01-01T00:00:00.000", "2024-01-01T00:00:00.0000Z", "2024-01-01 00:00:00.000Z"} {
		if v, ok := parseISO([]byte(bad)); ok {
			t.Errorf("parseISO(%q) = %d, not refused", bad, v)
		}
	}
}

func FuzzISO(f *testing.F) {
	f.Add([]byte("2025-12-03T14:00:00.000Z"), int64(0))
	f.Add([]byte("2024-02-29T23:59:59.999Z"), int64(-1))
	f.Add([]byte("2023-02-29T00:00:00.000Z"), int64(253402300799999))
	f.Fuzz(func(t *testing.T, b []byte, ms int64) {
		if v, ok := parseISO(b); ok {
			if got := appendISO(nil, v); string(got) != string(b) {
				t.Fatalf("parseISO(%q) = %d, written back as %q", b, v, got)
			}
			if w := jsonwire.ISOMillis(string(b)); w != v {
				t.Fatalf("parseISO(%q) = %d, ISOMillis says %d", b, v, w)
			}
		}
		// Any time of years 0 to 9999 is written as FormatTime writes
		// it, and read back.
		const lo, hi = -62167219200000, 253402300799999
		ms = lo + (ms%(hi-lo+1)+(hi-lo+1))%(hi-lo+1)
		s := appendISO(nil, ms)
		if want := FormatTime(time.UnixMilli(ms)); string(s) != want {
			t.Fatalf("appendISO(%d) = %s, FormatTime %s", ms, s, want)
		}
		if v, ok := parseISO(s); !ok || v != ms {
			t.Fatalf("parseISO(%s) = %d, %v; want %d", s, v, ok, ms)
		}
	})
}
