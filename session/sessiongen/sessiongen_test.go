package sessiongen

import (
	"bytes"
	"testing"
)

func TestDeterministicAndExact(t *testing.T) {
	for _, o := range []Options{
		{Entries: 0, Seed: 1},
		{Entries: 1, Seed: 1},
		{Entries: 250, Seed: 7},
		{Entries: 250, Seed: 7, TrailingHugeResults: 2, KeepRecentTokens: 1000},
		{Entries: 500, Seed: 3, NoCompactions: true, BranchRate: -1, HugeRate: -1, ImageRate: -1},
	} {
		a, b := Bytes(o), Bytes(o)
		if !bytes.Equal(a, b) {
			t.Fatalf("%+v: not deterministic", o)
		}
		if n := bytes.Count(a, []byte("\n")); n != o.Entries+1 {
			t.Errorf("%+v: %d lines, want %d", o, n, o.Entries+1)
		}
	}
	if bytes.Equal(Bytes(Options{Entries: 50, Seed: 1}), Bytes(Options{Entries: 50, Seed: 2})) {
		t.Error("different seeds give the same session")
	}
}
