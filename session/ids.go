package session

import (
	"slices"
	"sort"
)

// idIndex finds entries by id. The ids pi and Prime write (eight hex
// digits) are kept as numbers in one sorted array, 8 bytes an entry, which
// the persistent index stores as it is; ids appended since it was sorted
// are in a map, merged into the array once there are many; any other id
// is in a map of strings. When ids repeat, the later entry is found.
type idIndex struct {
	// sorted holds id<<32 | index for entries with hex ids, in ascending
	// order, so that of equal ids the later entry comes last.
	sorted []uint64
	recent map[uint32]int32
	odd    map[string]int32
}

// buildIDs indexes the ids of every entry of s, and returns, for each entry
// whose id an earlier entry has too, the index of the latest such earlier
// entry (for the warnings).
func buildIDs(recs []rec, odd map[int32]*oddRec) (*idIndex, map[int32]int32) {
	x := &idIndex{sorted: make([]uint64, 0, len(recs))}
	for i := range recs {
		if recs[i].flags&recHexID != 0 {
			x.sorted = append(x.sorted, uint64(recs[i].id)<<32|uint64(i))
		}
	}
	if !slices.IsSorted(x.sorted) {
		sortIDs(x.sorted)
	}
	return idsFrom(x.sorted, recs, odd)
}

// idsFrom is buildIDs given the hex ids already sorted (id<<32 | index,
// ascending), as a persistent index keeps them.
func idsFrom(sorted []uint64, recs []rec, odd map[int32]*oddRec) (*idIndex, map[int32]int32) {
	x := &idIndex{sorted: sorted}
	var dups map[int32]int32
	for k := 1; k < len(x.sorted); k++ {
		if x.sorted[k]>>32 == x.sorted[k-1]>>32 {
			if dups == nil {
				dups = make(map[int32]int32)
			}
			dups[int32(uint32(x.sorted[k]))] = int32(uint32(x.sorted[k-1]))
		}
	}
	// An id neither hex nor none is in the side table: without one, no
	// entry has such an id.
	for i := 0; i < len(recs) && len(odd) > 0; i++ {
		if recs[i].flags&(recHexID|recNoID) != 0 {
			continue
		}
		id := odd[int32(i)].id
		if j, ok := x.odd[id]; ok {
			if dups == nil {
				dups = make(map[int32]int32)
			}
			dups[int32(i)] = j
		}
		if x.odd == nil {
			x.odd = make(map[string]int32)
		}
		x.odd[id] = int32(i)
	}
	return x, dups
}

// lookup returns the index of the (latest) entry with the given id.
func (x *idIndex) lookup(id string) (int32, bool) {
	if v, ok := isHexID(id); ok {
		return x.lookupHex(v)
	}
	i, ok := x.odd[id]
	return i, ok
}

func (x *idIndex) lookupHex(v uint32) (int32, bool) {
	if i, ok := x.recent[v]; ok {
		return i, true
	}
	k := sort.Search(len(x.sorted), func(k int) bool { return x.sorted[k]>>32 > uint64(v) }) - 1
	if k >= 0 && x.sorted[k]>>32 == uint64(v) {
		return int32(uint32(x.sorted[k])), true
	}
	return 0, false
}

// all returns every hex id as sorted holds them: sorted with recent merged
// in.
func (x *idIndex) all() []uint64 {
	if len(x.recent) == 0 {
		return x.sorted
	}
	add := make([]uint64, 0, len(x.recent))
	for v, i := range x.recent {
		add = append(add, uint64(v)<<32|uint64(i))
	}
	slices.Sort(add)
	out := make([]uint64, 0, len(x.sorted)+len(add))
	a, b := x.sorted, add
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// add indexes entry i with id (hex: v) as the latest with that id.
func (x *idIndex) add(i int32, id string, v uint32, hex bool) {
	if !hex {
		if x.odd == nil {
			x.odd = make(map[string]int32)
		}
		x.odd[id] = i
		return
	}
	if x.recent == nil {
		x.recent = make(map[uint32]int32)
	}
	x.recent[v] = i
	if len(x.recent) > 4096 && len(x.recent) > len(x.sorted)/4 {
		x.sorted, x.recent = x.all(), nil
	}
}

// sortIDs sorts keys of the form id<<32 | index, given in ascending order
// of index: a stable radix sort on the id, four passes of 8 bits (several
// times faster than a comparison sort on the hundreds of thousands of
// keys of a long session, and 2.5 times faster than two passes of 16 bits,
// whose counts do not stay in the first-level cache); a short list is
// sorted by comparison.
func sortIDs(keys []uint64) {
	if len(keys) < 1<<12 {
		slices.Sort(keys)
		return
	}
	// Every pass's counts at once, then each pass moves the keys by its
	// byte of the id, in the order the pass before left them.
	var count [4][256]int32
	for _, k := range keys {
		count[0][k>>32&0xff]++
		count[1][k>>40&0xff]++
		count[2][k>>48&0xff]++
		count[3][k>>56]++
	}
	tmp := make([]uint64, len(keys))
	src, dst := keys, tmp
	for pass := range count {
		c := &count[pass]
		var sum int32
		for i, n := range c {
			c[i], sum = sum, sum+n
		}
		shift := uint(32 + 8*pass)
		for _, k := range src {
			d := k >> shift & 0xff
			dst[c[d]] = k
			c[d]++
		}
		src, dst = dst, src
	}
	// An even number of passes: the result is back in keys.
}
