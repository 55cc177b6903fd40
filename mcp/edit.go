package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/atomicfile"
	"github.com/prime-agent/prime/internal/jsonedit"
)

// Entry is a server entry as "prime mcp add" writes it.
type Entry struct {
	Command     string            `json:"command,omitzero"`
	Args        []string          `json:"args,omitzero"`
	Env         map[string]string `json:"env,omitzero"`
	CWD         string            `json:"cwd,omitzero"`
	URL         string            `json:"url,omitzero"`
	Headers     map[string]string `json:"headers,omitzero"`
	Description string            `json:"description,omitzero"`
}

// ErrNoServer is returned for a name the file has no entry for.
var ErrNoServer = errors.New("no such server")

// Add writes the entry name into the mcp.json at file, replacing an entry of
// that name and keeping the rest of the file as it was.
func Add(file, name string, e Entry) error {
	if !validName().MatchString(name) {
		return fmt.Errorf("server name %q: a name may hold only letters, digits, _ and -", name)
	}
	if (e.Command == "") == (e.URL == "") {
		return errors.New("a server needs a command or a url")
	}
	v, err := json.Marshal(e, json.Deterministic(true))
	if err != nil {
		return err
	}
	return edit(file, func(doc *jsonedit.Doc) ([]byte, error) {
		return doc.Set([]string{"mcpServers", name}, v)
	})
}

// Remove deletes the entry name from the mcp.json at file.
func Remove(file, name string) error {
	return edit(file, func(doc *jsonedit.Doc) ([]byte, error) {
		out, found, err := doc.Delete([]string{"mcpServers", name})
		if err == nil && !found {
			err = fmt.Errorf("%s: %w %q", file, ErrNoServer, name)
		}
		return out, err
	})
}

// SetEnabled sets the entry's "enabled" in the mcp.json at file. A file
// without the entry gets one holding only "enabled" (a project override
// of the user's server).
func SetEnabled(file, name string, on bool) error {
	v := jsontext.Value("false")
	if on {
		v = jsontext.Value("true")
	}
	return edit(file, func(doc *jsonedit.Doc) ([]byte, error) {
		return doc.Set([]string{"mcpServers", name, "enabled"}, v)
	})
}

// edit changes the file through f, creating it (and its directory) when
// missing, and writes it atomically.
func edit(file string, f func(*jsonedit.Doc) ([]byte, error)) error {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	doc, err := jsonedit.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: not valid JSON (%w); fix or remove it first", file, err)
	}
	out, err := f(doc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	// A new file is private: entries often hold keys.
	return atomicfile.Replace(file, out, 0o600)
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
