package agent

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/prime-agent/prime/session"
)

// ListSessions lists the sessions in dir (one folder's sessions
// directory), newest first; a missing dir holds none.
func ListSessions(dir string) ([]SessionInfo, error) { return session.List(dir) }

// ListAllSessions lists the sessions of every folder under root (the agent
// directory's sessions), newest first.
func ListAllSessions(root string) ([]SessionInfo, error) {
	ents, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("listing %s: %w", root, err)
	}
	var out []SessionInfo
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		infos, err := session.List(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, infos...)
	}
	slices.SortStableFunc(out, func(a, b SessionInfo) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	})
	return out, nil
}

// LeafID is the session's current leaf, "" before its first entry (or
// after navigating to before the first).
func (a *Agent) LeafID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.LeafID()
}

// EntryCount is the number of entries in the session file.
func (a *Agent) EntryCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.Len()
}

// DescribeEntry words the entry id as a tree row does ([Describer]), with
// no tool calls known; false when the session does not hold it.
func (a *Agent) DescribeEntry(id string) (Description, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.s.Entry(id)
	if e == nil {
		return Description{}, false
	}
	return NewDescriber().Describe(e, false), true
}
