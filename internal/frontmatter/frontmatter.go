// Package frontmatter splits a Markdown file into its YAML frontmatter and
// its body, the way pi 1.6 reads skills and prompt templates: a byte-order
// mark is dropped, line ends become "\n", the frontmatter is the text
// between a first line starting with "---" and the next line starting with
// "---", and the body is what follows, trimmed. A file without a closing
// "---" has no frontmatter: all of it is the body.
package frontmatter

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Doc is a parsed file.
type Doc struct {
	// Fields are the frontmatter's top-level keys (nil when there is none).
	Fields map[string]any
	// Body is the text after the frontmatter, trimmed; the whole file when
	// there is no frontmatter.
	Body string
}

// ErrNotMapping is returned when the frontmatter is YAML but not a mapping
// of keys to values (a list, or a bare string).
var ErrNotMapping = errors.New("frontmatter is not a mapping of keys to values")

// Parse splits content. The error says what is wrong with the YAML (with
// its line) when the frontmatter does not parse; the body is still set.
func Parse(content string) (Doc, error) {
	text := strings.TrimPrefix(content, "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	if !strings.HasPrefix(text, "---") {
		return Doc{Body: text}, nil
	}
	end := strings.Index(text[3:], "\n---")
	if end < 0 {
		return Doc{Body: text}, nil
	}
	end += 3
	yamlText := ""
	if end > 4 {
		yamlText = text[4:end]
	}
	doc := Doc{Body: strings.TrimSpace(text[end+4:])}
	var v any
	if err := yaml.Unmarshal([]byte(yamlText), &v); err != nil {
		return doc, fmt.Errorf("frontmatter is not valid YAML: %s", fileLines(err.Error()))
	}
	switch m := v.(type) {
	case nil:
		doc.Fields = map[string]any{}
	case map[string]any:
		doc.Fields = m
	default:
		return doc, ErrNotMapping
	}
	return doc, nil
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+):`) })

// fileLines words a YAML error with the file's line numbers (the
// frontmatter starts on the file's second line) and without the parser's
// name.
func fileLines(msg string) string {
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return "line " + strconv.Itoa(n+1) + ":" + msg[len(m[0]):]
	}
	return strings.TrimPrefix(msg, "yaml: ")
}

// String returns the field key when it is a string, else "".
func (d Doc) String(key string) string {
	s, _ := d.Fields[key].(string)
	return s
}

// Bool reports whether the field key is the YAML boolean true.
func (d Doc) Bool(key string) bool {
	b, _ := d.Fields[key].(bool)
	return b
}
