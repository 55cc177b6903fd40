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

// FuzzHexID checks the eight-digits-at-once hexID against reading the
// digits one by one: the same ids accepted (exactly eight of 0-9 and a-f),
// the same values.
func FuzzHexID(f *testing.F) {
	for _, s := range []string{"00000000", "ffffffff", "0123abcd", "9a8b7c6d", "0123ABCD", "0123abc", "0123abcde", "0123abg0", "/:`g@G\x80\xff", "0000000\xb0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want uint32
		wantOK := len(b) == 8
		for _, c := range b {
			switch {
			case c >= '0' && c <= '9':
				want = want<<4 | uint32(c-'0')
			case c >= 'a' && c <= 'f':
				want = want<<4 | uint32(c-'a'+10)
			default:
				wantOK = false
			}
		}
		got, ok := hexID(b)
		if ok != wantOK || ok && got != want {
			t.Fatalf("hexID(%q) = %08x, %v; want %08x, %v", b, got, ok, want, wantOK)
		}
	})
}
