package session

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The id index finds the latest entry of each id, as a map filled in file
// order does, before and after ids are added (and merged into the sorted
// array), and all returns the sorted array with the added ids merged in.
func TestIDIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []rec
	odd := map[int32]*oddRec{}
	want := map[string]int32{}
	newEntry := func() (string, rec) {
		var r rec
		if rng.IntN(50) == 0 {
			id := "odd-" + string(rune('a'+rng.IntN(20)))
			r.flags = recOdd
			odd[int32(len(recs))] = &oddRec{id: id}
			return id, r
		}
		r.id = uint32(rng.IntN(3000)) // repeats often
		r.flags = recHexID
		return string(appendHexID(nil, r.id)), r
	}
	for range 5000 {
		id, r := newEntry()
		want[id] = int32(len(recs))
		recs = append(recs, r)
	}
	x, dups := buildIDs(recs, odd)
	check := func(what string) {
		t.Helper()
		for id, i := range want {
			if got, ok := x.lookup(id); !ok || got != i {
				t.Fatalf("%s: lookup(%s) = %d, %v; want %d", what, id, got, ok, i)
			}
		}
		if _, ok := x.lookup("ffffffff"); ok {
			t.Fatalf("%s: an id not there is found", what)
		}
		all := x.all()
		if !slices.IsSorted(all) || len(all) != len(x.sorted)+len(x.recent) {
			t.Fatalf("%s: all is not the ids merged", what)
		}
	}
	check("built")
	if len(dups) == 0 {
		t.Fatal("no repeated id reported")
	}
	for n := 0; n < 20000; n++ {
		id, r := newEntry()
		i := int32(len(recs))
		recs = append(recs, r)
		want[id] = i
		x.add(i, id, r.id, r.flags&recHexID != 0)
		if n == 100 || n == 19999 {
			check("after adding")
		}
	}
}

// sortIDs sorts as a comparison sort does, on lists long enough for the
// radix sort, with repeated ids.
func TestSortIDs(t *testing.T) {
	for _, n := range []int{0, 5, 1 << 12, 50_000} {
		keys := make([]uint64, n)
		x := uint32(12345)
		for i := range keys {
			x = x*1664525 + 1013904223
			id := x
			if i%7 == 3 {
				id = uint32(keys[i/2] >> 32) // a repeat
			}
			keys[i] = uint64(id)<<32 | uint64(i)
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		sortIDs(keys)
		if !slices.Equal(keys, want) {
			t.Fatalf("%d keys: not sorted", n)
		}
	}
}
