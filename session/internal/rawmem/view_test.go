package rawmem

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestBytes(t *testing.T) {
	type rec struct {
		A int64
		B uint32
		C [2]uint8
		_ uint16
	}
	r := []rec{{A: 1, B: 2, C: [2]uint8{3, 4}}, {A: -1}}
	b := Bytes(r)
	if len(b) != 2*Size[rec]() || Size[rec]() != 16 {
		t.Fatalf("Bytes: %d bytes for 2 records of %d", len(b), Size[rec]())
	}
	if got := binary.NativeEndian.Uint64(b); got != 1 {
		t.Errorf("first field reads %d", got)
	}
	// A view: writing through the slice's bytes changes the records.
	copy(b[16:], make([]byte, 16))
	if r[1].A != 0 {
		t.Errorf("Bytes copied instead of viewing")
	}
	if Bytes([]rec(nil)) != nil {
		t.Error("Bytes of nothing is not nil")
	}
}

func TestBytesRefusesPointersAndBooleans(t *testing.T) {
	for name, f := range map[string]func(){
		"pointer": func() { Bytes([]struct{ P *int }{{}}) },
		"string":  func() { Bytes([]string{"x"}) },
		"bool":    func() { Bytes([]struct{ B [2]bool }{{}}) },
		"slice":   func() { Bytes([][]byte{nil}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Bytes accepted a %s", name)
				}
			}()
			f()
		})
	}
}

func TestStrings(t *testing.T) {
	b := []byte("hello, world")
	s := String(b[7:])
	if s != "world" {
		t.Fatalf("String = %q", s)
	}
	if String(nil) != "" || String(b[:0]) != "" {
		t.Error("String of nothing is not empty")
	}
	if !bytes.Equal(StringBytes(s), []byte("world")) || StringBytes("") != nil && len(StringBytes("")) != 0 {
		t.Errorf("StringBytes(%q) = %q", s, StringBytes(s))
	}
	a := [4]int{1, 2, 3, 4}
	if got := ArrayAt(&a[0], 4); len(got) != 4 || &got[3] != &a[3] {
		t.Errorf("ArrayAt = %v", got)
	}
}
