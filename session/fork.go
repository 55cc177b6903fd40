package session

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Fork starts a new session that holds one conversation of s: the path from
// the root to the entry leafID, and nothing off it (pi's
// createBranchedSession). The copied entries keep their ids, timestamps and
// bytes, except that label entries are left out of the path and the
// entries that followed one are linked to the entry before it instead.
// After the path come fresh label entries, one for every label s gives an
// entry of the path, with the time that label was set; labels of entries
// off the path are dropped. A compaction whose firstKeptEntryId named a
// dropped label entry names the entry that took its place.
//
// The new session is written to path as [Create] writes a new one, with
// opts as for Create: at once when the path holds a user or assistant message,
// else when one is appended or at [Session.Flush]. Its header records s's
// file as the parent session unless opts.ParentSession says otherwise, and
// s's working directory unless opts.CWD does. s is not changed. An unknown
// leafID is an error wrapping [ErrNotFound].
func (s *Session) Fork(path, leafID string, opts Options) (*Session, error) {
	leaf, ok := s.lookup(leafID)
	if !ok {
		return nil, fmt.Errorf("entry %s: %w", leafID, ErrNotFound)
	}
	if opts.ParentSession == "" && s.path != "" {
		abs, err := filepath.Abs(s.path)
		if err != nil {
			return nil, err
		}
		opts.ParentSession = abs
	}
	if opts.CWD == "" && s.header != nil {
		opts.CWD = s.header.CWD
	}
	f, err := Create(path, opts)
	if err != nil {
		return nil, err
	}
	on, err := s.forkPath(f, s.pathTo(leaf))
	if err != nil {
		return nil, err
	}
	f.index(0)
	labels, err := s.labelsOn(on)
	if err != nil {
		return nil, err
	}
	for _, l := range labels {
		line, err := EncodeEntry(f.newEntryID(), f.LeafID(), l.timestamp, &LabelEntry{TargetID: l.target, Label: l.label})
		if err != nil {
			return nil, err
		}
		if err := f.addLine(line); err != nil {
			return nil, fmt.Errorf("encoded label entry does not read back: %w", err)
		}
		f.index(f.Len() - 1)
	}
	if f.w.pending && f.hasConversation() {
		if err := f.create(nil); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// addLine adds an entry line to a session kept in memory (one not written
// yet), without indexing it (see index).
func (s *Session) addLine(line []byte) error {
	x, err := indexLine(line, s.indexed, s.lines+1)
	if err != nil {
		return err
	}
	s.src.appendMemory(line, []byte{'\n'})
	s.lines++
	s.sumLine(s.indexed, line, x.r.crc)
	s.indexed += int64(len(line)) + 1
	s.add(x)
	return nil
}

// add puts an indexed entry after the others, and returns its index.
func (s *Session) add(x indexed) int32 {
	i := int32(len(s.recs))
	s.recs = append(s.recs, x.r)
	s.setExtra(i, x.odd, x.meta)
	return i
}

// setExtra records the side-table strings and the label or name of entry
// i, when it has them.
func (s *Session) setExtra(i int32, odd *oddRec, m *meta) {
	if odd != nil {
		if s.odd == nil {
			s.odd = make(map[int32]*oddRec)
		}
		s.odd[i] = odd
	}
	if m != nil {
		s.metas = append(s.metas, metaAt{i, m})
	}
}

// ForkIn is [Session.Fork] with the new file named as pi names it, in dir
// (see [CreateIn]).
func (s *Session) ForkIn(dir, leafID string, opts Options) (*Session, error) {
	path, opts := nameIn(dir, opts)
	return s.Fork(path, leafID, opts)
}

// forkPath adds to f the lines of the entries of path without its label
// entries, each linked to the entry before it, and returns the ids of the
// entries added. The lines are read back in runs.
func (s *Session) forkPath(f *Session, path []*Entry) (map[string]bool, error) {
	on := make(map[string]bool, len(path))
	// replaced maps the id of a dropped label entry to the entry that
	// took its place: the next one kept.
	replaced := map[string]string{}
	var pending []string
	parent := ""
	const batch = 1024
	spans := make([]span, 0, batch)
	lines := make([][]byte, batch)
	for start := 0; start < len(path); start += batch {
		part := path[start:min(start+batch, len(path))]
		spans = spans[:0]
		for _, e := range part {
			spans = append(spans, e.span())
		}
		if err := s.src.readSpans(spans, lines[:len(part)]); err != nil {
			return nil, err
		}
		for k, e := range part {
			if e.Type == TypeLabel {
				pending = append(pending, e.ID)
				continue
			}
			for _, id := range pending {
				replaced[id] = e.ID
			}
			pending = pending[:0]
			line := lines[k]
			set := map[string]string{}
			if e.ParentID != parent {
				set["parentId"] = parent
			}
			if e.Type == TypeCompaction {
				if kept, ok := stringMemberOf(line, "firstKeptEntryId"); ok && kept != e.ID {
					if to, ok := replaced[kept]; ok {
						set["firstKeptEntryId"] = to
					}
				}
			}
			if len(set) > 0 {
				var err error
				if line, err = setMembers(line, set); err != nil {
					return nil, fmt.Errorf("%s: line %d: %w", s.path, e.Line, err)
				}
			}
			if err := f.addLine(line); err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", s.path, e.Line, err)
			}
			on[e.ID] = true
			parent = e.ID
		}
	}
	return on, nil
}

// stringMemberOf returns the line's member name when it is a string.
func stringMemberOf(line []byte, name string) (string, bool) {
	v, err := memberOf(line, name)
	if err != nil || v.Kind() != '"' {
		return "", false
	}
	str, err := jsontext.AppendUnquote(nil, v)
	return string(str), err == nil
}

// setMembers returns the object raw with the string members in set given
// new values: in place when raw has them, else added at its end (as
// JavaScript's object spread orders them). An empty value is written as
// null. Everything else is copied byte for byte.
func setMembers(raw []byte, set map[string]string) ([]byte, error) {
	value := func(s string) jsontext.Value {
		if s == "" {
			return jsontext.Value("null")
		}
		v, _ := jsontext.AppendQuote(nil, s)
		return v
	}
	seen := map[string]bool{}
	out, err := rewriteMembers(raw, nil, func(name string, v jsontext.Value) (jsontext.Value, bool) {
		if s, ok := set[name]; ok {
			seen[name] = true
			return value(s), true
		}
		return v, true
	})
	if err != nil {
		return nil, err
	}
	out = out[:len(out)-1]
	for _, name := range []string{"parentId", "firstKeptEntryId"} {
		s, ok := set[name]
		if !ok || seen[name] {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, name)
		out = append(out, ':')
		out = append(out, value(s)...)
	}
	return append(out, '}'), nil
}

// forkLabel is a label to carry over into a fork.
type forkLabel struct {
	target, label, timestamp string
}

// labelsOn returns the labels s gives the entries with the given ids, in
// the order pi keeps them: by when the target was first labeled, counting
// again from a label that was cleared; each with the time its current
// label was set.
func (s *Session) labelsOn(on map[string]bool) ([]forkLabel, error) {
	var order []string
	cur := map[string]forkLabel{}
	for i := range s.recs {
		if s.recs[i].typ != typeLabel {
			continue
		}
		e := s.entryAt(int32(i))
		p, err := e.Payload()
		if errors.Is(err, ErrFileChanged) {
			return nil, err
		}
		if err != nil {
			continue
		}
		l := p.(*LabelEntry)
		if l.Label == "" {
			if _, ok := cur[l.TargetID]; ok {
				delete(cur, l.TargetID)
				order = slices.DeleteFunc(order, func(t string) bool { return t == l.TargetID })
			}
			continue
		}
		if _, ok := cur[l.TargetID]; !ok {
			order = append(order, l.TargetID)
		}
		cur[l.TargetID] = forkLabel{target: l.TargetID, label: l.Label, timestamp: e.Timestamp}
	}
	var out []forkLabel
	for _, id := range order {
		if on[id] {
			out = append(out, cur[id])
		}
	}
	return out, nil
}
