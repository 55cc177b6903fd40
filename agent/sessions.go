package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// ErrNotSaved means a fork or clone was asked of a session whose file has
// not been written yet (nothing was sent in it).
var ErrNotSaved = errors.New("this session has not been saved yet: send a message before forking or cloning it")

// SessionsDir is the directory this agent's new sessions go to: the agent
// directory's sessions folder for the working directory.
func (a *Agent) SessionsDir() string {
	agentDir := a.cfg.AgentDir
	if agentDir == "" {
		agentDir = a.settings().AgentDir()
	}
	return settings.SessionsDir(agentDir, a.cwd())
}

// NewSession starts a new session in the sessions directory (one kept in
// memory when the current one is) and works on it from now on. A run in
// progress is aborted first; queued messages stay queued.
func (a *Agent) NewSession() error { return a.NewSessionFrom("") }

// NewSessionFrom is NewSession with parent, when not empty, recorded in the
// new session's header as the session it came from (parentSession; pi's
// new_session command takes it from its client).
func (a *Agent) NewSessionFrom(parent string) error {
	a.Abort()
	a.mu.Lock()
	memory := a.s.File() == ""
	a.mu.Unlock()
	opts := session.Options{CWD: a.cwd(), ParentSession: parent}
	var s *session.Session
	var err error
	if memory {
		s, err = session.Create("", opts)
	} else {
		s, err = session.CreateIn(a.SessionsDir(), opts)
	}
	if err != nil {
		return err
	}
	a.replaceSession(s, true)
	return nil
}

// SwitchSession works on the session file at path from now on (opened for
// appending; an older format version is migrated, keeping FILE.bak). A run in
// progress is aborted first.
func (a *Agent) SwitchSession(path string) error {
	s, err := session.OpenWith(path, a.cfg.readOptions())
	if err != nil {
		return err
	}
	a.Abort()
	a.replaceSession(s, true)
	return nil
}

// replaceSession makes s the agent's session, closing the one it opened
// before; the conversation's model and tools stay, its bookkeeping of the
// session starts over.
func (a *Agent) replaceSession(s *session.Session, opened bool) {
	a.mu.Lock()
	old, wasOpened := a.s, a.opened
	a.s, a.opened, a.migrated = s, opened, false
	c := &a.conv
	c.setUp, c.recovered, c.retries, c.retry, c.lastErr = false, false, 0, false, nil
	file := s.File()
	a.mu.Unlock()
	if wasOpened && old != s {
		old.Close()
	}
	a.emit(SessionChanged{File: file})
}

// ForkResult is the outcome of [Agent.Fork].
type ForkResult struct {
	// File is the new session's file.
	File string
	// EditorText is the text of the user message forked from, for the user
	// to edit and send again.
	EditorText string
}

// Fork starts a new session holding the conversation up to (not including)
// the user message entryID, and works on it from now on: pi's /fork. The
// message's text is returned for editing. entryID must be a user message of
// this session, which must have been saved.
func (a *Agent) Fork(entryID string) (*ForkResult, error) {
	a.mu.Lock()
	e := a.s.Entry(entryID)
	file := a.s.File()
	a.mu.Unlock()
	if e == nil || e.Type != session.TypeMessage {
		return nil, fmt.Errorf("entry %q: not a user message of this session: %w", entryID, session.ErrNotFound)
	}
	m, err := e.Message()
	if err != nil {
		return nil, err
	}
	u, ok := m.(*llm.UserMessage)
	if !ok {
		return nil, fmt.Errorf("entry %s is a %s message; fork from a user message", entryID, m.Role())
	}
	if err := a.saved(file); err != nil {
		return nil, err
	}
	a.Abort()
	s, err := a.forkAt(e.ParentID)
	if err != nil {
		return nil, err
	}
	a.replaceSession(s, true)
	return &ForkResult{File: s.File(), EditorText: llm.TextOf(u.Content)}, nil
}

// Clone starts a new session holding the whole conversation at the leaf,
// and works on it from now on: pi's /clone.
func (a *Agent) Clone() (string, error) {
	a.mu.Lock()
	leaf, file := a.s.LeafID(), a.s.File()
	a.mu.Unlock()
	if leaf == "" {
		return "", errors.New("nothing to clone yet: the session is empty")
	}
	if err := a.saved(file); err != nil {
		return "", err
	}
	a.Abort()
	s, err := a.forkAt(leaf)
	if err != nil {
		return "", err
	}
	a.replaceSession(s, true)
	return s.File(), nil
}

// saved fails with ErrNotSaved when the session's file does not exist.
func (a *Agent) saved(file string) error {
	if file == "" {
		return nil // a session in memory forks into memory
	}
	if _, err := os.Stat(file); err != nil {
		return ErrNotSaved
	}
	return nil
}

// forkAt makes the new session for Fork and Clone: the path to leaf ("" for
// none), in the sessions directory (in memory for a session in memory).
func (a *Agent) forkAt(leaf string) (*session.Session, error) {
	dir := a.SessionsDir()
	a.mu.Lock()
	defer a.mu.Unlock()
	opts := session.Options{CWD: a.cwdLocked()}
	if a.s.File() == "" {
		if leaf == "" {
			return session.Create("", opts)
		}
		return a.s.Fork("", leaf, opts)
	}
	if leaf == "" {
		opts.ParentSession = a.s.File()
		return session.CreateIn(dir, opts)
	}
	return a.s.ForkIn(dir, leaf, opts)
}

// ExportBranch writes the conversation at the leaf (the root-to-leaf path,
// labels kept) to path as a session file of its own.
func (a *Agent) ExportBranch(path string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	leaf := a.s.LeafID()
	if leaf == "" {
		return errors.New("nothing to export: the session is empty")
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already exists", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := a.s.Fork(path, leaf, session.Options{CWD: a.cwdLocked()})
	if err != nil {
		return err
	}
	if err := f.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SetLabel bookmarks an entry (a label entry; an empty label clears it).
func (a *Agent) SetLabel(entryID, label string) error {
	label = strings.TrimSpace(label)
	a.mu.Lock()
	if a.s.Entry(entryID) == nil {
		a.mu.Unlock()
		return fmt.Errorf("entry %q: %w", entryID, session.ErrNotFound)
	}
	e, err := a.appendLocked(&session.LabelEntry{TargetID: entryID, Label: label})
	a.mu.Unlock()
	if err != nil {
		return err
	}
	a.emit(EntryAppended{Entry: e})
	return nil
}

// LastAssistantText returns the text of the last reply on the path that has
// any (aborted, failed and tool-only replies are passed over); ok is false
// when there is none.
func (a *Agent) LastAssistantText() (text string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for m, err := range messagesBack(a.s.LeafView()) {
		if err != nil {
			continue
		}
		am, isReply := m.(*llm.AssistantMessage)
		if !isReply || am.StopReason == llm.StopReasonAborted || am.StopReason == llm.StopReasonError {
			continue
		}
		if t := strings.TrimSpace(am.Text()); t != "" {
			return am.Text(), true
		}
	}
	return "", false
}
