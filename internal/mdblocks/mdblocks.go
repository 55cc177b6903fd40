// Package mdblocks reads the code blocks of Markdown documentation that
// tests run, so that an example in the docs cannot drift from what the code
// does.
//
// A tested block is a fenced code block on the line after a marker:
//
//	<!-- tested: NAME -->
//	```python
//	...
//	```
//
// NAME is the block's name for the tests (a file name, for instance); any
// text after it inside the marker is a comment for the reader.
package mdblocks

import (
	"fmt"
	"os"
	"strings"
)

// Tested returns the tested blocks of the Markdown file at path by name,
// each with its final newline. A marker not followed by a code block, a
// block that is never closed, or a name used twice is an error.
func Tested(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(data))
}

// Parse is [Tested] on the text of a file; path names it in errors.
func Parse(path, text string) (map[string]string, error) {
	blocks := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		rest, ok := strings.CutPrefix(lines[i], "<!-- tested: ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(rest, "-->"), " ")
		marker := i + 1
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			return nil, fmt.Errorf("%s:%d: no code block after the marker", path, marker)
		}
		if _, dup := blocks[name]; dup {
			return nil, fmt.Errorf("%s:%d: a second block named %q", path, marker, name)
		}
		var b strings.Builder
		for i += 2; ; i++ {
			if i >= len(lines) {
				return nil, fmt.Errorf("%s:%d: the code block is not closed", path, marker+1)
			}
			if lines[i] == "```" {
				break
			}
			b.WriteString(lines[i] + "\n")
		}
		blocks[name] = b.String()
	}
	return blocks, nil
}
