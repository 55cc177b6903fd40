package session

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// Info summarizes one session file for a listing.
type Info struct {
	Path          string    `json:"path"`
	ID            string    `json:"id"`
	CWD           string    `json:"cwd"`
	Name          string    `json:"name,omitzero"`
	ParentSession string    `json:"parentSession,omitzero"`
	Created       time.Time `json:"created"`
	// Modified is the last activity: the newest user or assistant message,
	// else the header's time, else the file's modification time.
	Modified time.Time `json:"modified"`
	// MessageCount counts the message entries, except the system prompt's.
	MessageCount int `json:"messageCount"`
	// FirstMessage is the text of the first user message, in the user's
	// own words (the files an @file argument attached left out), or "".
	FirstMessage string `json:"firstMessage"`
	// Entries counts all entries, Warnings the problems found reading it.
	Entries  int `json:"entries"`
	Warnings int `json:"warnings"`
}

// Title is what a listing shows for the session: its name, else its first
// user message, else "(no messages)".
func (i *Info) Title() string {
	switch {
	case i.Name != "":
		return i.Name
	case i.FirstMessage != "":
		return i.FirstMessage
	}
	return "(no messages)"
}

// List returns the sessions in dir (its *.jsonl files that are session
// files), most recently active first. Files that are not sessions or cannot
// be read are left out. A missing directory has no sessions.
func List(dir string) ([]Info, error) {
	names, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, d := range names {
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".jsonl") {
			continue
		}
		info, err := ReadInfo(filepath.Join(dir, d.Name()))
		if err != nil {
			continue
		}
		out = append(out, *info)
	}
	slices.SortStableFunc(out, func(a, b Info) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	})
	return out, nil
}

// ReadInfo loads one session file and summarizes it (see [Info]).
func ReadInfo(path string) (*Info, error) {
	s, err := Load(path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	h := s.Header()
	info := &Info{
		Path: path, ID: h.ID, CWD: h.CWD, Name: s.Name(), ParentSession: h.ParentSession,
		Entries: s.Len(), Warnings: len(s.Warnings()),
	}
	if ms := jsonwire.ISOMillis(h.Timestamp); ms != 0 {
		info.Created = time.UnixMilli(ms).UTC()
	}
	var last int64
	var msgs []int32
	for i := range s.recs {
		if s.recs[i].typ == typeMessage {
			msgs = append(msgs, int32(i))
		}
	}
	err = s.readLines(msgs, func(i int32, line []byte) error {
		raw := messageBytes(line, s.recs[i].head)
		role, err := DecodeMessageRole(raw)
		if err != nil || role != RoleSystem {
			info.MessageCount++
		}
		if err != nil || role != llm.RoleUser && role != llm.RoleAssistant {
			return nil
		}
		ts, ok := messageMillis(raw)
		if !ok {
			ts = s.recs[i].ms
		}
		last = max(last, ts)
		if info.FirstMessage == "" && role == llm.RoleUser {
			if m, err := DecodeMessage(raw); err == nil {
				info.FirstMessage = firstText(m.(*llm.UserMessage).Content)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case last > 0:
		info.Modified = time.UnixMilli(last).UTC()
	case !info.Created.IsZero():
		info.Modified = info.Created
	default:
		if fi, err := os.Stat(path); err == nil {
			info.Modified = fi.ModTime().UTC()
		}
	}
	return info, nil
}

// firstText joins a user message's text blocks with spaces, as pi's listing
// does.
func firstText(content []llm.Content) string {
	var parts, files []string
	for _, c := range content {
		if t, ok := c.(llm.Text); ok {
			text := attachedFile().ReplaceAllStringFunc(t.Text, func(f string) string {
				files = append(files, "@"+filepath.Base(attachedFile().FindStringSubmatch(f)[1]))
				return ""
			})
			if text = strings.Join(strings.Fields(text), " "); text != "" {
				parts = append(parts, text)
			}
		}
	}
	if len(parts) == 0 {
		return strings.Join(files, " ") // only files: their names
	}
	return strings.Join(parts, " ")
}

// attachedFile matches a file an @file argument attached to a prompt
// (pi's layout: <file name="PATH">, the contents, </file>).
var attachedFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<file name="([^"]*)">.*?</file>`) })

// messageMillis returns a stored message's numeric "timestamp". pi writes it
// as the last member of user and tool-result messages, so it is looked for
// there first; otherwise the message's members are read.
func messageMillis(raw []byte) (int64, bool) {
	if i := bytes.LastIndex(raw, []byte(`,"timestamp":`)); i >= 0 && raw[len(raw)-1] == '}' {
		if n, ok := plainInt(raw[i+len(`,"timestamp":`):len(raw)-1], 18); ok {
			return n, true
		}
	}
	var m struct {
		Timestamp *float64 `json:"timestamp"`
	}
	if err := json.Unmarshal(raw, &m, jsonwire.ReadOptions); err != nil || m.Timestamp == nil {
		return 0, false
	}
	return int64(*m.Timestamp), true
}

// MostRecent returns the session file in dir modified last (by file
// modification time, as pi's --continue picks it), considering only *.jsonl
// files whose first line is a session header, and, when cwd is not empty,
// whose header names that working directory. It returns an error wrapping
// [ErrNotFound] when there is none.
func MostRecent(dir, cwd string) (string, error) {
	names, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var best string
	var bestTime time.Time
	for _, d := range names {
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, d.Name())
		h, err := ReadHeader(p)
		if err != nil || cwd != "" && h.CWD != cwd {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if best == "" || fi.ModTime().After(bestTime) {
			best, bestTime = p, fi.ModTime()
		}
	}
	if best == "" {
		return "", fmt.Errorf("no session in %s: %w", dir, ErrNotFound)
	}
	return best, nil
}
