package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/atomicfile"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// oldEntry is an entry of a file in an older format version while it is
// migrated.
type oldEntry struct {
	typ, id, ts string
	line        int
	raw         []byte
}

// parseOld reads a version-1 or version-2 session from data, whose header
// part is hp, and migrates it to version 3 in memory (pi's
// migrateToCurrentVersion, with deterministic ids). Entries that change
// get new lines; the others keep theirs. The session reads its entries
// from the migrated lines, kept in memory; the lines it could not read
// keep their bytes, for Migrate.
func parseOld(name string, data []byte, hp *headerPart) (*Session, error) {
	s := newRead(name, nil, hp)
	s.scanned = int64(len(data))
	if !s.midLine {
		scan, err := scanLines(memReader(data), s.indexed, int64(len(data)), s.lines, true)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		s.absorb(scan)
	}
	es := make([]oldEntry, len(s.recs))
	for i := range s.recs {
		r := &s.recs[i]
		es[i] = oldEntry{typ: s.typeOf(int32(i)), id: s.idOf(int32(i)), line: int(r.line), raw: data[r.off : r.off+int64(r.n)]}
	}
	for i := range s.recs {
		r := &s.recs[i]
		if r.flags&recISOTime != 0 {
			es[i].ts = string(appendISO(nil, r.ms))
		} else {
			es[i].ts = s.oddOf(int32(i)).ts
		}
	}
	if s.fileVersion < 2 {
		if err := migrateV1(s, es); err != nil {
			return nil, err
		}
	}
	for i, e := range es {
		if e.typ != TypeMessage {
			continue
		}
		line, changed, err := renameHookMessage(e.raw)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", s.path, e.line, err)
		}
		if changed {
			es[i].raw = line
		}
	}
	h, err := rewriteMembers(s.header.raw, []member{
		{"type", []byte(`"session"`)},
		{"version", []byte(strconv.Itoa(CurrentVersion))},
	}, func(name string, v jsontext.Value) (jsontext.Value, bool) {
		return v, name != "type" && name != "version"
	})
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", s.path, err)
	}
	s.header.raw = h
	s.header.Version = CurrentVersion
	// The migrated lines, in memory, are what the entries read.
	buf := append(bytes.Clone(h), '\n')
	s.recs, s.odd, s.metas, s.blocks = make([]rec, 0, len(es)), nil, nil, nil
	for _, e := range es {
		x, err := indexLine(e.raw, int64(len(buf)), e.line)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d does not read back after migration: %w", s.path, e.line, err)
		}
		buf = append(append(buf, e.raw...), '\n')
		s.add(x)
	}
	s.src = memorySource(buf)
	s.index(0)
	return s, nil
}

// MigrationID is the id a version-1 entry gets when its file is migrated:
// the first eight hex digits of SHA-256 over the session id, a zero byte and
// the entry's position among the file's entries (0 for the first), then,
// if that id is taken, over the same bytes followed by a zero byte and a
// counter (1, 2, ...). The same file thus always gets the same ids.
func MigrationID(sessionID string, position, attempt int) string {
	h := sha256.New()
	io.WriteString(h, sessionID)
	h.Write([]byte{0})
	io.WriteString(h, strconv.Itoa(position))
	if attempt > 0 {
		h.Write([]byte{0})
		io.WriteString(h, strconv.Itoa(attempt))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:4])
}

// migrateV1 gives every entry an id and links the entries into one chain in
// file order (pi's migrateV1ToV2), turning a compaction's
// firstKeptEntryIndex into a firstKeptEntryId.
func migrateV1(s *Session, es []oldEntry) error {
	// firstKeptEntryIndex counts the JSON objects pi parsed, the header
	// being 0: the entries, and the skipped lines that were objects
	// without a type.
	var objects []int // objects[k] = entry index, or -1 for a typeless object
	objects = append(objects, -1)
	sk := 0
	for i, e := range es {
		for ; sk < len(s.skipped) && s.skipped[sk].line < e.line; sk++ {
			if raw := s.skipped[sk].raw; raw[0] == '{' && validJSON(raw) {
				objects = append(objects, -1)
			}
		}
		objects = append(objects, i)
	}
	ids := make(map[string]bool, len(es))
	for i := range es {
		id := MigrationID(s.header.ID, i, 0)
		for attempt := 1; ids[id]; attempt++ {
			id = MigrationID(s.header.ID, i, attempt)
		}
		ids[id] = true
		es[i].id = id
	}
	for i := range es {
		e := &es[i]
		parent := ""
		if i > 0 {
			parent = es[i-1].id
		}
		firstKept := []byte(nil)
		var dropIndex bool
		if e.typ == TypeCompaction {
			v, err := memberOf(e.raw, "firstKeptEntryIndex")
			if err == nil {
				dropIndex = true
				if n, ok := jsonIndex(v); ok && n > 0 && n < len(objects) && objects[n] >= 0 {
					firstKept, _ = jsontext.AppendQuote(nil, es[objects[n]].id)
				}
			}
		}
		var parentVal jsontext.Value = []byte("null")
		if parent != "" {
			parentVal, _ = jsontext.AppendQuote(nil, parent)
		}
		idVal, _ := jsontext.AppendQuote(nil, e.id)
		typeVal, _ := jsontext.AppendQuote(nil, e.typ)
		first := []member{{"type", typeVal}, {"id", idVal}, {"parentId", parentVal}}
		if e.ts != "" {
			tsVal, _ := jsontext.AppendQuote(nil, e.ts)
			first = append(first, member{"timestamp", tsVal})
		}
		line, err := rewriteMembers(e.raw, first, func(name string, v jsontext.Value) (jsontext.Value, bool) {
			switch name {
			case "type", "id", "parentId", "timestamp", "firstKeptEntryId":
				return nil, false
			case "firstKeptEntryIndex":
				if !dropIndex || firstKept == nil {
					return nil, false
				}
				return firstKept, true
			}
			return v, true
		}, renameIndex)
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", s.path, e.line, err)
		}
		e.raw = line
	}
	return nil
}

// renameIndex names the member that replaces firstKeptEntryIndex.
func renameIndex(name string) string {
	if name == "firstKeptEntryIndex" {
		return "firstKeptEntryId"
	}
	return name
}

// jsonIndex reads a non-negative integer index.
func jsonIndex(v jsontext.Value) (int, bool) {
	if v.Kind() != '0' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f < 0 || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

type member struct {
	name  string
	value jsontext.Value
}

// rewriteMembers writes the object raw again: first the members in first,
// then each member of raw that keep returns true for, in order, with the
// value keep returns. rename, if given, may change the kept members' names.
// Values are copied byte for byte.
func rewriteMembers(raw []byte, first []member, keep func(name string, v jsontext.Value) (jsontext.Value, bool), rename ...func(string) string) ([]byte, error) {
	out := make([]byte, 0, len(raw)+64)
	out = append(out, '{')
	for _, m := range first {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, m.name)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	dec := jsonwire.NewDecoder(raw)
	err := jsonwire.ReadObject(dec, func(name string) error {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		v, ok := keep(name, v)
		if !ok {
			return nil
		}
		for _, r := range rename {
			name = r(name)
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, name)
		out = append(out, ':')
		out = append(out, v...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// renameHookMessage renames the version-2 message role hookMessage to
// custom (pi's migrateV2ToV3). changed is false when the entry has another
// role.
func renameHookMessage(line []byte) ([]byte, bool, error) {
	if !bytes.Contains(line, []byte(RoleHookMessage)) {
		return line, false, nil
	}
	msg, err := memberOf(line, "message")
	if err != nil || msg.Kind() != '{' {
		return line, false, nil
	}
	if role, err := DecodeMessageRole(msg); err != nil || role != RoleHookMessage {
		return line, false, nil
	}
	custom, _ := jsontext.AppendQuote(nil, RoleCustom)
	newMsg, err := rewriteMembers(msg, nil, func(name string, v jsontext.Value) (jsontext.Value, bool) {
		if name == "role" {
			return custom, true
		}
		return v, true
	})
	if err != nil {
		return nil, false, err
	}
	out, err := rewriteMembers(line, nil, func(name string, v jsontext.Value) (jsontext.Value, bool) {
		if name == "message" {
			return newMsg, true
		}
		return v, true
	})
	return out, err == nil, err
}

// DecodeMessageRole returns the "role" of a stored message without decoding
// the rest of it.
func DecodeMessageRole(raw []byte) (string, error) {
	if role, ok := fastRole(raw); ok {
		return role, nil
	}
	return llm.PeekRole(raw)
}

// Bytes returns the session as a file: the header line and every entry line
// in file order, each ending in a newline, read back from the file. Lines
// the loader skipped are left out. For a version-3 file read without
// warnings, Bytes returns the file's bytes exactly.
func (s *Session) Bytes() ([]byte, error) {
	return s.render(false)
}

// render writes the header and entries; with keepSkipped, the skipped lines
// too, each in its place.
func (s *Session) render(keepSkipped bool) ([]byte, error) {
	size := len(s.header.raw) + 1
	for i := range s.recs {
		size += int(s.recs[i].n) + 1
	}
	if keepSkipped {
		for _, l := range s.skipped {
			size += len(l.raw) + 1
		}
	}
	out := make([]byte, 0, size)
	sk := 0
	flush := func(line int) {
		for ; keepSkipped && sk < len(s.skipped) && s.skipped[sk].line < line; sk++ {
			out = append(out, s.skipped[sk].raw...)
			out = append(out, '\n')
		}
	}
	out = append(out, s.header.raw...)
	out = append(out, '\n')
	err := s.eachLine(func(i int32, line []byte) error {
		flush(int(s.recs[i].line))
		out = append(out, line...)
		out = append(out, '\n')
		return nil
	})
	if err != nil {
		return nil, err
	}
	flush(int(^uint(0) >> 1))
	return out, nil
}

// eachLine calls f with each entry line in file order (see readLines).
func (s *Session) eachLine(f func(i int32, line []byte) error) error {
	all := make([]int32, len(s.recs))
	for i := range all {
		all[i] = int32(i)
	}
	return s.readLines(all, f)
}

// readLines calls f with the lines of the entries idx, in that order,
// reading them back in runs of neighbours (see source.readSpans).
func (s *Session) readLines(idx []int32, f func(i int32, line []byte) error) error {
	const batch = 4096
	spans := make([]span, 0, min(batch, len(idx)))
	out := make([][]byte, min(batch, len(idx)))
	for start := 0; start < len(idx); start += batch {
		part := idx[start:min(start+batch, len(idx))]
		spans = spans[:0]
		for _, i := range part {
			r := &s.recs[i]
			spans = append(spans, span{off: r.off, n: r.n, crc: r.crc, r: r, odd: s.odd[i]})
		}
		if err := s.src.readSpans(spans, out[:len(spans)]); err != nil {
			return err
		}
		for k, line := range out[:len(spans)] {
			if err := f(part[k], line); err != nil {
				return err
			}
		}
	}
	return nil
}

// Migrate rewrites the session file at path in the current format version
// when it is older. The old file is kept as path+".bak"; the new one
// replaces it atomically (temporary file, fsync, rename), so a crash leaves
// one or the other. Lines the loader could not read are carried over
// unchanged. Prime processes appending to the file wait for the rewrite and
// then reopen the file. It reports whether the file was rewritten.
func Migrate(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return false, fmt.Errorf("locking %s: %w", path, err)
	}
	defer unlockFile(f)
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Mode().IsRegular() {
		// Most files are current: their header says so, and the rest of
		// the file is not read.
		hp, err := readHeaderPart(path, f, fi.Size())
		if err != nil {
			return false, err
		}
		if hp.header.Version >= CurrentVersion {
			return false, nil
		}
	}
	size := -1
	if fi.Mode().IsRegular() {
		size = int(fi.Size())
	}
	data, err := readAll(f, size)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	s, err := Parse(path, data)
	if err != nil {
		return false, err
	}
	if s.fileVersion >= CurrentVersion {
		return false, nil
	}
	mode := os.FileMode(0o600)
	if fi, err := f.Stat(); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := atomicfile.WriteFile(path+".bak", data, mode); err != nil {
		return false, fmt.Errorf("keeping a backup of %s: %w", path, err)
	}
	out, err := s.render(true)
	if err != nil {
		return false, err
	}
	if err := atomicfile.WriteFile(path, out, mode); err != nil {
		return false, fmt.Errorf("rewriting %s: %w", path, err)
	}
	return true, nil
}
