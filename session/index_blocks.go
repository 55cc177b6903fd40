package session

import "weak"

// A session hands out *Entry values made from its index on demand. They
// are made blockLen at a time into one array, which the session refers to
// weakly: the array lives as long as any of its entries is in use (a
// pointer to an element keeps the whole array alive), so an entry asked
// for twice is the same *Entry while anyone can tell, and entries nobody
// uses any more cost nothing. The strings of an entry (id, parent id,
// timestamp) are written into a buffer of the block, once.

const blockLen = 64

// entryBlock holds the entries of indices [k*blockLen, (k+1)*blockLen); an
// element is filled when first asked for (its src is set then).
type entryBlock struct {
	e    [blockLen]Entry
	text []byte
}

// entryAt returns entry i, made from its rec when no one holds it.
func (s *Session) entryAt(i int32) *Entry {
	k := int(i / blockLen)
	b := s.hot
	if b == nil || s.hotK != k {
		if k >= len(s.blocks) {
			s.blocks = append(s.blocks, make([]weak.Pointer[entryBlock], k+1-len(s.blocks))...)
		}
		if b = s.blocks[k].Value(); b == nil {
			b = new(entryBlock)
			s.blocks[k] = weak.Make(b)
		}
		// The block last used is held, so that a run of its entries
		// costs one look-up.
		s.hot, s.hotK = b, k
	}
	e := &b.e[i%blockLen]
	if e.src == nil {
		s.fill(b, e, i)
	}
	return e
}

// entriesAt returns the entries of the given indices.
func (s *Session) entriesAt(idx []int32) []*Entry {
	if len(idx) == 0 {
		return nil
	}
	out := make([]*Entry, len(idx))
	for k, i := range idx {
		out[k] = s.entryAt(i)
	}
	return out
}

// idText returns an id of a rec: eight hex digits written into the
// block's buffer when flags has hex, else other (empty for none).
func (b *entryBlock) idText(flags, hex uint8, v uint32, other string) string {
	if flags&hex == 0 {
		return other
	}
	n := len(b.text)
	b.text = appendHexID(b.text, v)
	return sharedString(b.text[n:])
}

// textPerEntry is room for an entry's id, parent id and timestamp.
const textPerEntry = 8 + 8 + 24

// fill makes e, in block b, entry i.
func (s *Session) fill(b *entryBlock, e *Entry, i int32) {
	r := &s.recs[i]
	var none oddRec
	odd := &none
	if r.flags&recOdd != 0 {
		odd = s.odd[i]
	}
	if cap(b.text)-len(b.text) < textPerEntry {
		// Full (or new): the strings already made keep the old buffer.
		b.text = make([]byte, 0, blockLen*textPerEntry)
	}
	if r.typ == typeOdd {
		e.Type = odd.typ
	} else {
		e.Type = typeNames[r.typ]
	}
	e.ID = b.idText(r.flags, recHexID, r.id, odd.id)
	e.ParentID = b.idText(r.flags, recHexParent, r.pid, odd.parent)
	if r.flags&recISOTime != 0 {
		n := len(b.text)
		b.text = appendISO(b.text, r.ms)
		e.Timestamp = sharedString(b.text[n:])
	} else {
		e.Timestamp = odd.ts
	}
	e.Line = int(r.line)
	e.off, e.n, e.crc, e.head, e.role, e.idx = r.off, r.n, r.crc, r.head, r.role, i
	e.src = s.src
}
