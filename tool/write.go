package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/atomicfile"
)

type writeTool struct{ env Env }

const writeSchema = `{"type":"object","required":["path","content"],"properties":{` +
	`"path":{"type":"string","description":"The file to write, absolute or relative to the working directory"},` +
	`"content":{"type":"string","description":"The file's complete new content"}}}`

func (t *writeTool) Spec() Spec {
	return Spec{
		Name: "write",
		Description: "Write a file with the given content, replacing it if it exists and creating it, " +
			"and any missing parent directories, if it does not.",
		Parameters: jsontext.Value(writeSchema),
		Snippet:    "Create a file or replace its whole content",
		Guidelines: []string{"Use write for new files and complete rewrites; change existing files with edit."},
	}
}

// Paths returns the file the call writes.
func (t *writeTool) Paths(args jsontext.Value) []string { return t.env.pathOf(args, "") }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (t *writeTool) Run(ctx context.Context, call Call) (Result, error) {
	var a writeArgs
	if err := decodeArgs("write", call.Args, &a); err != nil {
		return Result{}, err
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	abs, err := t.env.resolve(a.Path)
	if err != nil {
		return Result{}, err
	}
	target := canonical(abs)
	if err := t.env.confined(ctx).checkWrite(target, a.Path); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return Result{}, fmt.Errorf("cannot create the directory for %s: %w", abs, unwrapPath(err))
	}
	if err := t.env.confined(ctx).recheckWrite(abs, target, a.Path); err != nil {
		return Result{}, err
	}
	if err := writeKeepingMode(target, []byte(a.Content)); err != nil {
		return Result{}, fmt.Errorf("cannot write %s: %w", abs, err)
	}
	return textResult(fmt.Sprintf("Wrote %d %s to %s.", len(a.Content), plural(len(a.Content), "byte", "bytes"), a.Path), nil), nil
}

// writeKeepingMode replaces the file at path (symbolic links already
// resolved) atomically, keeping its permissions; a new file gets 0644.
func writeKeepingMode(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return errors.New("it is a directory")
	case err == nil:
		mode = st.Mode().Perm()
		// The rename would replace a file the user may not write to;
		// opening it for writing asks the system whether they may.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return unwrapPath(err)
		}
		f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return unwrapPath(err)
	}
	if err := atomicfile.WriteFile(path, data, mode); err != nil {
		return unwrapPath(err)
	}
	return nil
}
