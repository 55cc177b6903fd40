package session

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/bits"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"

	"github.com/prime-agent/prime/session/internal/rawmem"
)

// The index keeps, for every entry, where its line is and what the tree
// and the cheap decisions need, in a fixed-size record and without the
// line's bytes: 48 bytes an entry, however long its line. Strings a record
// cannot hold in that form (an id that is not eight lowercase hex digits,
// a timestamp not in JavaScript's toISOString form, a type Prime does not
// know) go to a side table; pi and Prime write none.

// recSize is a record's size in bytes, part of the persistent index's
// format: records are stored as they are in memory (rawmem.Bytes), so rec
// must stay plain and of this size (TestRecLayout).
const recSize = 48

// rec is what the index keeps of one entry. Its layout is fixed (the
// persistent index stores records as they are in memory).
type rec struct {
	// off is where the line starts (in the file, or in a session's
	// memory), n its length without the newline, crc its CRC-32C.
	off int64
	// ms is the timestamp in Unix milliseconds (jsonwire.ISOMillis).
	ms  int64
	n   uint32
	crc uint32
	// line is the 1-based line number.
	line int32
	// parent is the index of the parent entry, or -1 for a root.
	parent int32
	// id and pid are the id and the parentId as numbers, when recHexID and
	// recHexParent say they are eight lowercase hex digits.
	id, pid uint32
	// head is the offset in the line just after the timestamp when the
	// line starts with the four common members in pi's order, else 0.
	head uint32
	// typ is the entry type's code (typeOdd: in the side table), role a
	// message entry's role code (0: not read yet).
	typ, role uint8
	flags     uint8
	_         uint8
}

// Flags of a rec.
const (
	recHexID     = 1 << iota // ID is id as eight hex digits
	recNoID                  // ID is ""
	recHexParent             // ParentID is pid as eight hex digits
	recNoParent              // ParentID is ""
	recISOTime               // Timestamp is ms in toISOString form
	recOdd                   // the side table has strings for the entry
)

// oddRec holds the strings of an entry that its rec cannot: each is used
// only when the rec's flags say so.
type oddRec struct {
	typ, id, parent, ts string
}

// Entry type codes.
const (
	typeOdd uint8 = iota
	typeMessage
	typeThinkingLevelChange
	typeModelChange
	typeCompaction
	typeBranchSummary
	typeCustom
	typeCustomMessage
	typeLabel
	typeSessionInfo
	typeContextEdit
	typeSession
)

// typeNames are the type names by code.
var typeNames = [...]string{
	typeMessage: TypeMessage, typeThinkingLevelChange: TypeThinkingLevelChange, typeModelChange: TypeModelChange,
	typeCompaction: TypeCompaction, typeBranchSummary: TypeBranchSummary, typeCustom: TypeCustom,
	typeCustomMessage: TypeCustomMessage, typeLabel: TypeLabel, typeSessionInfo: TypeSessionInfo,
	typeContextEdit: TypeContextEdit, typeSession: TypeSession,
}

// typeCode returns the code of a known entry type, or typeOdd.
func typeCode(t []byte) uint8 {
	for c, name := range typeNames {
		if c != int(typeOdd) && string(t) == name {
			return uint8(c)
		}
	}
	return typeOdd
}

// Message role codes.
const (
	roleUnknown uint8 = iota // not a message, or not read yet
	roleUser
	roleAssistant
	roleToolResult
	roleSystem
	roleBashExecution
	roleCustom
	roleBranchSummary
	roleCompactionSummary
	roleHookMessage
)

// roleNames are the role names by code.
var roleNames = [...]string{
	roleUser: llm.RoleUser, roleAssistant: llm.RoleAssistant, roleToolResult: llm.RoleToolResult,
	roleSystem: RoleSystem, roleBashExecution: RoleBashExecution, roleCustom: RoleCustom,
	roleBranchSummary: RoleBranchSummary, roleCompactionSummary: RoleCompactionSummary, roleHookMessage: RoleHookMessage,
}

// roleCode returns the code of a known role, or roleUnknown.
func roleCode(role string) uint8 {
	for c, name := range roleNames {
		if c != int(roleUnknown) && role == name {
			return uint8(c)
		}
	}
	return roleUnknown
}

// castagnoli is the CRC-32C table: the hardware computes it on amd64 and
// arm64, many bytes a cycle. It is made on first use (its tables take a
// fifth of a millisecond), not at every start of Prime.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli()) }

// meta is what a label or session_info entry says, read while its line is
// at hand so that opening a session does not read those entries again.
type meta struct {
	label *LabelEntry
	name  *string
}

// indexed is one line read as an entry.
type indexed struct {
	r    rec
	odd  *oddRec
	meta *meta
}

// indexLine reads one line of a session file (without its newline or the
// white space around it), found at off, as an entry. Nothing it returns
// refers to line. It fails when the line is not valid JSON or not an
// object with a string "type".
func indexLine(line []byte, off int64, num int) (indexed, error) {
	// The common members fastHead reads are valid JSON as they are: the
	// validator takes the line from where they end.
	h, fast := fastHead(line)
	if fast && !validObjectFrom(line, h.end) || !fast && !validJSON(line) {
		return indexed{}, malformed(line)
	}
	x, err := headRec(line, h, fast)
	if err != nil {
		return indexed{}, err
	}
	r := &x.r
	r.off, r.n, r.crc, r.line = off, uint32(len(line)), checksum(line), int32(num)
	if r.typ == typeLabel || r.typ == typeSessionInfo {
		x.meta = lineMeta(r.typ, line)
	}
	return x, nil
}

// readHead reads what a record keeps of a line's content (valid JSON, or
// it fails): its type, id, parent id, timestamp, where they end and a
// message's role; nothing about where the line is. Reading a line back,
// it tells whether the line is the one a record describes (see
// ident.carriedBy).
func readHead(line []byte) (indexed, error) {
	h, ok := fastHead(line)
	return headRec(line, h, ok)
}

// headRec is readHead given what fastHead said of the line.
func headRec(line []byte, h head, fast bool) (indexed, error) {
	var x indexed
	r := &x.r
	r.parent = -1
	var typ, id, parent, ts []byte
	if fast {
		typ, id, parent, ts = h.typ, h.id, h.parent, h.ts
		r.head = uint32(h.end)
	} else {
		e, err := slowHead(line)
		if err != nil {
			return indexed{}, err
		}
		typ, id, parent, ts = []byte(e.Type), []byte(e.ID), []byte(e.ParentID), []byte(e.Timestamp)
	}
	odd := func() *oddRec {
		if x.odd == nil {
			x.odd = new(oddRec)
			r.flags |= recOdd
		}
		return x.odd
	}
	if r.typ = typeCode(typ); r.typ == typeOdd {
		odd().typ = string(typ)
	}
	r.flags |= packID(id, recNoID, recHexID, &r.id, func() *string { return &odd().id })
	r.flags |= packID(parent, recNoParent, recHexParent, &r.pid, func() *string { return &odd().parent })
	if ms, ok := parseISO(ts); ok {
		r.ms, r.flags = ms, r.flags|recISOTime
	} else {
		r.ms = jsonwire.ISOMillis(string(ts))
		odd().ts = string(ts)
	}
	if r.typ == typeMessage {
		if raw, ok := lastMember(line, r.head, `,"message":`); ok {
			if role, ok := fastRole(raw); ok {
				r.role = roleCode(role)
			}
		}
	}
	return x, nil
}

// packID keeps an id of a line in a rec: none (flag none), eight hex
// digits as the number *v (flag hex), or any other string in *other().
func packID(b []byte, none, hex uint8, v *uint32, other func() *string) uint8 {
	if len(b) == 0 {
		return none
	}
	if n, ok := hexID(b); ok {
		*v = n
		return hex
	}
	*other() = string(b)
	return 0
}

// lineMeta decodes what a label or session_info line says; nil when its
// payload does not decode (the entry then says nothing, as before).
func lineMeta(typ uint8, line []byte) *meta {
	switch typ {
	case typeLabel:
		var l LabelEntry
		if json.Unmarshal(line, &l, jsonwire.ReadOptions) != nil {
			return nil
		}
		return &meta{label: &l}
	case typeSessionInfo:
		var si SessionInfoEntry
		if json.Unmarshal(line, &si, jsonwire.ReadOptions) != nil {
			return nil
		}
		return &meta{name: &si.Name}
	}
	return nil
}

// lastMember returns the bytes between the member named by prefix (given as
// `,"name":`) right after the common fields (which end at head) and the
// line's closing brace: the member's value when it is the last member. The
// caller must check that the result is a single JSON value.
func lastMember(line []byte, head uint32, prefix string) ([]byte, bool) {
	if head == 0 || int(head) > len(line) {
		return nil, false
	}
	rest := line[head:]
	if !bytes.HasPrefix(rest, []byte(prefix)) || len(rest) < len(prefix)+2 || rest[len(rest)-1] != '}' {
		return nil, false
	}
	return rest[len(prefix) : len(rest)-1], true
}

// hexID reads an id of exactly eight lowercase hex digits, the form pi and
// Prime give entry ids.
func hexID(b []byte) (uint32, bool) {
	if len(b) != 8 {
		return 0, false
	}
	// All eight digits at once: a branch per digit mispredicts on random
	// ids. For bytes below 0x80, adding 0x80-lo sets a byte's high bit
	// exactly when it is at least lo, and adding 0x7f-hi exactly when it
	// is above hi; no sum carries into the next byte.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := binary.LittleEndian.Uint64(b)
	atLeast := func(lo uint64) uint64 { return x + ones*(0x80-lo) }
	digits := atLeast('0') &^ atLeast('9'+1) & highs
	letters := atLeast('a') &^ atLeast('f'+1) & highs
	if x&highs != 0 || digits|letters != highs {
		return 0, false
	}
	// Each byte's value, 'a' (1 in its low four bits) to 10; then the
	// nibbles packed in pairs, the pairs in fours, the first digit the
	// most significant.
	n := x&(ones*0x0f) + (letters>>7)*9
	n = (n&0x000f000f000f000f)<<4 | n>>8&0x000f000f000f000f
	n = (n | n>>8) & 0x0000ffff0000ffff
	n = (n | n>>16) & 0xffffffff
	return bits.ReverseBytes32(uint32(n)), true
}

// appendHexID writes an id read by hexID back as its eight digits.
func appendHexID(b []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

// isHexID reports whether id has the form hexID reads, and its value.
func isHexID(id string) (uint32, bool) {
	if len(id) != 8 {
		return 0, false
	}
	return hexID(rawmem.StringBytes(id))
}

// parseISO reads a timestamp in exactly the form FormatTime writes,
// 2025-12-03T14:00:00.000Z, with every field in range, as Unix
// milliseconds: appendISO writes it back byte for byte. ok is false for any
// other text, which the index keeps as it is.
func parseISO(b []byte) (int64, bool) {
	if len(b) != 24 {
		return 0, false
	}
	// The 24 bytes as three words, in the form YYYY-MM- DDTHH:MM
	// :SS.mmmZ. XOR with '0' turns a digit into its value and any other
	// byte into something above 9; the separators are compared as they
	// are. Eight bytes a test, not a branch a byte.
	const (
		digits0, seps0 = 0x00ff_ff00_ffff_ffff, 0x2d00_002d_0000_0000 // "YYYY-MM-"
		digits1, seps1 = 0xffff_00ff_ff00_ffff, 0x0000_3a00_0054_0000 // "DDTHH:MM"
		digits2, seps2 = 0x00ff_ffff_00ff_ff00, 0x5a00_0000_2e00_003a // ":SS.mmmZ"
		zeros          = 0x3030_3030_3030_3030
		low7, highs    = 0x7f7f_7f7f_7f7f_7f7f, 0x8080_8080_8080_8080
	)
	x0, x1, x2 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:])
	if x0&^digits0 != seps0 || x1&^digits1 != seps1 || x2&^digits2 != seps2 {
		return 0, false
	}
	d0, d1, d2 := (x0^zeros)&digits0, (x1^zeros)&digits1, (x2^zeros)&digits2
	// A byte above 9: adding 0x76 to its low seven bits sets its high
	// bit, or the high bit is set already. No carry leaves a byte, and
	// the separators' places, zero, stay below 0x80.
	const above9 = 0x7676_7676_7676_7676
	if ((d0&low7+above9)|d0|(d1&low7+above9)|d1|(d2&low7+above9)|d2)&highs != 0 {
		return 0, false
	}
	at := func(x uint64, k uint) int { return int(x >> (8 * k) & 0xff) }
	year := at(d0, 0)*1000 + at(d0, 1)*100 + at(d0, 2)*10 + at(d0, 3)
	month, day := at(d0, 5)*10+at(d0, 6), at(d1, 0)*10+at(d1, 1)
	hour, minute := at(d1, 3)*10+at(d1, 4), at(d1, 6)*10+at(d1, 7)
	sec, milli := at(d2, 1)*10+at(d2, 2), at(d2, 4)*100+at(d2, 5)*10+at(d2, 6)
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	days := daysFromCivil(year, month, day)
	return ((days*24+int64(hour))*60+int64(minute))*60000 + int64(sec)*1000 + int64(milli), true
}

// appendISO writes Unix milliseconds as FormatTime does, for the times
// parseISO reads (years 0 to 9999).
func appendISO(b []byte, ms int64) []byte {
	days := ms / 86400000
	rem := ms % 86400000
	if rem < 0 {
		rem += 86400000
		days--
	}
	year, month, day := civilFromDays(days)
	hour, minute, sec, milli := int(rem/3600000), int(rem/60000%60), int(rem/1000%60), int(rem%1000)
	return append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10), 'Z')
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(year, month int) int {
	switch month {
	case 2:
		if isLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days from 1970-01-01 to the given date of the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (year, month, day int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}
