package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/glob"
)

type findTool struct{ env Env }

const findSchema = `{"type":"object","required":["pattern"],"properties":{` +
	`"pattern":{"type":"string","description":"A glob: with a '/', e.g. 'src/**/*.ts', it is matched against paths from the searched directory; without, e.g. '*.ts', against names at any depth"},` +
	`"path":{"type":"string","description":"The directory to search (default: the working directory)"},` +
	`"limit":{"type":"number","description":"The most paths to return (default: 1000)"}}}`

const findDefaultLimit = 1000

func (t *findTool) Spec() Spec {
	return Spec{
		Name: "find",
		Description: fmt.Sprintf("Find files and directories by glob pattern. Paths are returned relative to the "+
			"searched directory, directories with a trailing '/'. Hidden files are included; what .gitignore "+
			"excludes and .git are not. An all-lowercase pattern ignores case. At most %d paths (or the limit) "+
			"and %s are returned.", findDefaultLimit, FormatSize(MaxBytes)),
		Parameters: jsontext.Value(findSchema),
		Snippet:    "Find files by glob pattern (skips what .gitignore excludes)",
	}
}

type findArgs struct {
	Pattern string   `json:"pattern"`
	Path    *string  `json:"path"`
	Limit   *float64 `json:"limit"`
}

type findDetails struct {
	ResultLimitReached int         `json:"resultLimitReached,omitzero"`
	Truncation         *Truncation `json:"truncation,omitzero"`
}

func (t *findTool) Run(ctx context.Context, call Call) (Result, error) {
	var a findArgs
	if err := decodeArgs("find", call.Args, &a); err != nil {
		return Result{}, err
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	env := t.env.confined(ctx)
	root, err := searchDir(env, a.Path)
	if err != nil {
		return Result{}, err
	}
	pattern := a.Pattern
	for strings.HasPrefix(pattern, "./") {
		pattern = pattern[2:]
	}
	absolute := filepath.IsAbs(pattern)
	if absolute {
		pattern = strings.TrimLeft(filepath.ToSlash(pattern), "/")
	}
	byPath := strings.Contains(pattern, "/")
	p, err := glob.Compile(pattern, glob.Options{Braces: true, FoldCase: pattern == strings.ToLower(pattern)})
	if err != nil {
		return Result{}, err
	}
	limit := countArg(a.Limit, findDefaultLimit)
	var found []string
	more := false
	err = walkTree(ctx, root, env.skipHidden(root, func(e walkEntry) (bool, error) {
		var ok bool
		switch {
		case absolute:
			ok = p.Match(strings.TrimPrefix(filepath.ToSlash(e.abs), "/"))
		case byPath:
			ok = p.Match(e.rel)
		default:
			ok = p.Match(e.name)
		}
		if ok {
			if len(found) == limit {
				more = true
				return false, errStopWalk
			}
			if e.isDir {
				found = append(found, e.rel+"/")
			} else {
				found = append(found, e.rel)
			}
		}
		return true, nil
	}))
	if err != nil {
		return Result{}, err
	}
	if len(found) == 0 {
		return textResult("No files match the pattern.", nil), nil
	}
	return listResult(found, more, limit, func(d *findDetails, t *Truncation) {
		if more {
			d.ResultLimitReached = limit
		}
		d.Truncation = t
	}, "%d %s shown, the limit: use limit=%d for more, or narrow the pattern.", "path", "paths"), nil
}

// searchDir resolves the directory argument of find and ls.
func searchDir(env Env, path *string) (string, error) {
	root, err := env.resolve(deref(path, "."))
	if err != nil {
		return "", err
	}
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s does not exist", root)
	case err != nil:
		return "", fmt.Errorf("cannot read %s: %w", root, unwrapPath(err))
	case !st.IsDir():
		return "", fmt.Errorf("%s is not a directory", root)
	}
	return root, nil
}

// listResult joins the lines of a find or ls result, cut at MaxBytes, with
// the notices for the limit and the cut. limitNotice is a format taking
// the limit, the noun, and twice the limit.
func listResult[D any](lines []string, more bool, limit int, fill func(*D, *Truncation), limitNotice, one, many string) Result {
	text, t := TruncateHead(strings.Join(lines, "\n"), math.MaxInt, MaxBytes)
	t.MaxLines = 0 // the count limit bounds the lines
	var notices []string
	if more {
		notices = append(notices, fmt.Sprintf(limitNotice, limit, plural(limit, one, many), 2*limit))
	}
	var tp *Truncation
	if t.Truncated {
		tp = &t
		notices = append(notices, fmt.Sprintf("Output cut at %s.", FormatSize(MaxBytes)))
	}
	if len(notices) == 0 {
		return textResult(text, nil)
	}
	var d D
	fill(&d, tp)
	return textResult(text+"\n\n["+strings.Join(notices, " ")+"]", detailsOf(d))
}
