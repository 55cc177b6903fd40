package tui

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// imagePath matches a pasted path (or file:// URI) of an image file.
var imagePath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^[^\n]+\.(?:png|jpe?g|gif|webp)$`) })

// imagePaste turns a pasted path of an image file (what a terminal pastes
// when a file is dropped on it: bare, quoted, with escaped spaces, or as a
// file:// URI) into an @path reference, which attaches the image when the
// prompt is sent. Anything else is returned unchanged. It does no I/O: the
// agent reads (and checks) the file when the prompt is sent.
func imagePaste(content string) string {
	p := strings.TrimSpace(content)
	if len(p) >= 2 && (p[0] == '\'' && p[len(p)-1] == '\'' || p[0] == '"' && p[len(p)-1] == '"') {
		p = p[1 : len(p)-1]
	}
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		u, err := url.PathUnescape(rest)
		if err != nil {
			return content
		}
		p = u
	}
	p = strings.ReplaceAll(p, `\ `, " ")
	if !imagePath().MatchString(p) || !(strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "./")) {
		return content
	}
	if strings.ContainsAny(p, " \t") {
		return `@"` + p + `" `
	}
	return "@" + p + " "
}
