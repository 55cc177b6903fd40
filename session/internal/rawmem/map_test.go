package rawmem

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A map reads the file's bytes, moves its window as views move on, and a
// read past the end of a file that shrank under it is ErrShrank, not a
// crash.
func TestFileMap(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := NewFileMap(f, int64(len(data)), 1<<20, 4096)
	if m == nil {
		t.Skip("no maps on this system")
	}
	defer m.Close()
	for _, r := range [][2]int64{{0, 10}, {5, 1 << 20}, {1<<20 + 3, 2<<20 + 5000}, {100, 200}, {int64(len(data)) - 7, int64(len(data))}} {
		v, err := m.View(r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(v, data[r[0]:r[1]]) {
			t.Fatalf("View(%d, %d) reads other bytes", r[0], r[1])
		}
	}
	v, err := m.View(2<<20, 2<<20+1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	err = Guard(func() error {
		var sum byte
		for _, c := range v {
			sum += c
		}
		t.Log(sum)
		return nil
	})
	if !errors.Is(err, ErrShrank) {
		t.Fatalf("reading past the new end: %v", err)
	}
}

// Guard passes errors through and lets other panics go on.
func TestGuard(t *testing.T) {
	want := errors.New("x")
	if err := Guard(func() error { return want }); err != want {
		t.Errorf("Guard returned %v", err)
	}
	defer func() {
		if recover() != "other" {
			t.Error("Guard swallowed a panic that is not a fault")
		}
	}()
	Guard(func() error { panic("other") })
}

// Populate changes no byte of what it is given, whole huge pages or not,
// nor of what lies around it.
func TestPopulate(t *testing.T) {
	for _, n := range []int{0, 1, 4096, 3<<20 + 5, 9 << 20} {
		b := make([]byte, n+2<<20)
		for i := range b {
			b[i] = byte(i*7 + i>>12)
		}
		want := bytes.Clone(b)
		Populate(b[1<<20+3 : 1<<20+3+n])
		if !bytes.Equal(b, want) {
			t.Errorf("Populate of %d bytes changed memory", n)
		}
	}
}
