package session

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// chunkWriter records each write, and fails the write numbered failAt
// (from 1) after taking half of it.
type chunkWriter struct {
	bytes.Buffer
	writes []int
	failAt int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	if len(w.writes) == w.failAt {
		w.Buffer.Write(p[:len(p)/2])
		return len(p) / 2, errors.New("disk full")
	}
	return w.Buffer.Write(p)
}

func TestWriteWhole(t *testing.T) {
	line := []byte(strings.Repeat("x", createChunk/3))
	var lines []byte
	for range 7 {
		lines = append(append(lines, line...), '\n')
	}
	var w chunkWriter
	n, err := writeWhole(&w, lines)
	if err != nil || n != int64(w.Len()) || !bytes.Equal(w.Bytes(), lines) {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(lines), err)
	}
	// Two lines per write, each write ending a line.
	if len(w.writes) != 4 {
		t.Fatalf("writes %v, want 2, 2, 2 and 1 lines", w.writes)
	}
	// One line longer than a write is written alone.
	long := append(bytes.Repeat([]byte("y"), createChunk+10), '\n')
	w = chunkWriter{}
	if _, err := writeWhole(&w, append(append([]byte("a\n"), long...), "b\n"...)); err != nil || len(w.writes) != 3 {
		t.Errorf("long line: %v, writes %v", err, w.writes)
	}
	w = chunkWriter{}
	if _, err := writeWhole(&w, lines); err != nil {
		t.Fatal(err)
	}
	if len(w.writes) != 4 {
		t.Fatalf("writes %v, want 2, 2, 2 and 1 lines", w.writes)
	}
	for _, n := range w.writes[:3] {
		if n != 2*(len(line)+1) {
			t.Errorf("write of %d bytes, want two whole lines", n)
		}
	}

	small := []byte("{\"type\":\"session\"}\n{\"type\":\"message\"}\n")
	w = chunkWriter{}
	if _, err := writeWhole(&w, small); err != nil || len(w.writes) != 1 || w.String() != "{\"type\":\"session\"}\n{\"type\":\"message\"}\n" {
		t.Errorf("small session: %v, writes %v, %q", err, w.writes, w.String())
	}

	w = chunkWriter{failAt: 2}
	n, err = writeWhole(&w, lines)
	if err == nil || n != int64(w.Len()) || len(w.writes) != 2 {
		t.Errorf("failing write: %d bytes reported, %d written, writes %v, err %v", n, w.Len(), w.writes, err)
	}
}
