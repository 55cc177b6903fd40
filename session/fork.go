package session

import (
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
	leaf, ok := s.byID[leafID]
	if !ok {
		return nil, fmt.Errorf("session: entry %s: %w", leafID, ErrNotFound)
	}
	if opts.ParentSession == "" && s.path != "" {
		abs, err := filepath.Abs(s.path)
		if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		opts.ParentSession = abs
	}
	if opts.CWD == "" && s.header != nil {
		opts.CWD = s.header.CWD
	}
	entries, err := s.forkPath(s.pathTo(leaf))
	if err != nil {
		return nil, err
	}
	f, err := Create(path, opts)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		f.lines++
		e.Line = f.lines
		f.entries = append(f.entries, e)
	}
	f.index(0)
	for _, l := range s.labelsOn(entries) {
		line, err := EncodeEntry(f.newEntryID(), f.LeafID(), l.timestamp, &LabelEntry{TargetID: l.target, Label: l.label})
		if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		e := new(Entry)
		if err := decodeLineInto(e, line); err != nil {
			return nil, fmt.Errorf("session: encoded label entry does not read back: %w", err)
		}
		f.lines++
		e.Line = f.lines
		f.entries = append(f.entries, e)
		f.index(len(f.entries) - 1)
	}
	if f.w.pending && f.hasConversation() {
		if err := f.create(nil); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// ForkIn is [Session.Fork] with the new file named as pi names it, in dir
// (see [CreateIn]).
func (s *Session) ForkIn(dir, leafID string, opts Options) (*Session, error) {
	path, opts := nameIn(dir, opts)
	return s.Fork(path, leafID, opts)
}

// forkPath returns copies of the entries of path without its label
// entries, each linked to the entry before it in the result.
func (s *Session) forkPath(path []*Entry) ([]*Entry, error) {
	out := make([]*Entry, 0, len(path))
	// replaced maps the id of a dropped label entry to the entry that
	// took its place: the next one kept.
	replaced := map[string]string{}
	var pending []string
	parent := ""
	for _, e := range path {
		if e.Type == TypeLabel {
			pending = append(pending, e.ID)
			continue
		}
		for _, id := range pending {
			replaced[id] = e.ID
		}
		pending = pending[:0]
		set := map[string]string{}
		if e.ParentID != parent {
			set["parentId"] = parent
		}
		if e.Type == TypeCompaction {
			if kept, ok := e.stringMember("firstKeptEntryId"); ok && kept != e.ID {
				if to, ok := replaced[kept]; ok {
					set["firstKeptEntryId"] = to
				}
			}
		}
		c := &Entry{Type: e.Type, ID: e.ID, ParentID: parent, Timestamp: e.Timestamp, raw: e.raw, head: e.head}
		if len(set) > 0 {
			raw, err := setMembers(e.raw, set)
			if err != nil {
				return nil, fmt.Errorf("session: %s: line %d: %w", s.path, e.Line, err)
			}
			c.raw, c.head = raw, headLen(raw)
		}
		out = append(out, c)
		parent = e.ID
	}
	return out, nil
}

// stringMember returns the entry's member name when it is a string.
func (e *Entry) stringMember(name string) (string, bool) {
	v, err := e.member(name)
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

// labelsOn returns the labels s gives the entries, in the order pi keeps
// them: by when the target was first labeled, counting again from a label
// that was cleared; each with the time its current label was set.
func (s *Session) labelsOn(entries []*Entry) []forkLabel {
	var order []string
	cur := map[string]forkLabel{}
	for _, e := range s.entries {
		if e.Type != TypeLabel {
			continue
		}
		p, err := e.Payload()
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
	on := make(map[string]bool, len(entries))
	for _, e := range entries {
		on[e.ID] = true
	}
	var out []forkLabel
	for _, id := range order {
		if on[id] {
			out = append(out, cur[id])
		}
	}
	return out
}
