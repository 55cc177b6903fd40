package tool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

type lsTool struct{ env Env }

const lsSchema = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"The directory to list (default: the working directory)"},` +
	`"limit":{"type":"number","description":"The most entries to return (default: 500)"}}}`

const lsDefaultLimit = 500

func (t *lsTool) Spec() Spec {
	return Spec{
		Name: "ls",
		Description: fmt.Sprintf("List a directory: its entries sorted by name regardless of case, directories "+
			"with a trailing '/', hidden ones included. At most %d entries (or the limit) and %s are returned.",
			lsDefaultLimit, FormatSize(MaxBytes)),
		Parameters: jsontext.Value(lsSchema),
		Snippet:    "List a directory's entries",
	}
}

type lsArgs struct {
	Path  *string  `json:"path"`
	Limit *float64 `json:"limit"`
}

type lsDetails struct {
	EntryLimitReached int         `json:"entryLimitReached,omitzero"`
	Truncation        *Truncation `json:"truncation,omitzero"`
}

func (t *lsTool) Run(ctx context.Context, call Call) (Result, error) {
	var a lsArgs
	if err := decodeArgs("ls", call.Args, &a); err != nil {
		return Result{}, err
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	env := t.env.confined(ctx)
	dir, err := searchDir(env, a.Path)
	if err != nil {
		return Result{}, err
	}
	if real := canonical(dir); env.hidden(real) {
		return Result{}, &ReadDeniedError{Path: deref(a.Path, "."), Real: real}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Result{}, fmt.Errorf("cannot read the directory %s: %w", dir, unwrapPath(err))
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	slices.SortFunc(names, func(x, y string) int {
		if c := strings.Compare(strings.ToLower(x), strings.ToLower(y)); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	limit := countArg(a.Limit, lsDefaultLimit)
	more := len(names) > limit
	names = names[:min(len(names), limit)]
	for i, name := range names {
		if i%256 == 0 {
			if err := aborted(ctx); err != nil {
				return Result{}, err
			}
		}
		// Stat follows a link, so a link to a directory is shown as one;
		// a broken link is shown as a plain entry.
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
			names[i] = name + "/"
		}
	}
	if len(names) == 0 {
		return textResult("(empty directory)", nil), nil
	}
	return listResult(names, more, limit, func(d *lsDetails, t *Truncation) {
		if more {
			d.EntryLimitReached = limit
		}
		d.Truncation = t
	}, "%d %s shown, the limit: use limit=%d for more.", "entry", "entries"), nil
}
