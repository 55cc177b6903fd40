package tool

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds on what one tool result shows the model: whichever is reached
// first. Head truncation (read, grep, find, ls) keeps the first whole lines
// that fit; tail truncation (bash) keeps the last ones.
const (
	MaxLines = 2000
	MaxBytes = 50 * 1024
)

// maxLineRunes is how much of one line grep shows.
const maxLineRunes = 500

// Truncation describes how text was cut to the limits. It is stored in a
// result's details (JSON names as pi's) for user interfaces.
type Truncation struct {
	Truncated bool `json:"truncated"`
	// TruncatedBy is "lines" or "bytes": the limit that was reached.
	TruncatedBy string `json:"truncatedBy,omitzero"`
	// TotalLines and TotalBytes measure the whole text; OutputLines and
	// OutputBytes what was kept.
	TotalLines  int `json:"totalLines"`
	TotalBytes  int `json:"totalBytes"`
	OutputLines int `json:"outputLines"`
	OutputBytes int `json:"outputBytes"`
	// LastLinePartial is set by tail truncation when the last line alone
	// was over the byte limit and only its end is kept.
	LastLinePartial bool `json:"lastLinePartial,omitzero"`
	// FirstLineExceedsLimit is set by head truncation when the first line
	// alone is over the byte limit, so nothing is kept.
	FirstLineExceedsLimit bool `json:"firstLineExceedsLimit,omitzero"`
	// MaxLines and MaxBytes are the limits applied; MaxLines is 0 for
	// grep, find and ls, whose count limits bound the lines.
	MaxLines int `json:"maxLines"`
	MaxBytes int `json:"maxBytes"`
}

// countLines counts lines as the truncation limits do: the pieces between
// newlines, not counting an empty piece after a final newline.
func countLines(text string) int {
	if text == "" {
		return 0
	}
	n := strings.Count(text, "\n") + 1
	if strings.HasSuffix(text, "\n") {
		n--
	}
	return n
}

// TruncateHead keeps the first whole lines of text that fit in maxLines
// lines and maxBytes bytes (newlines between lines counted). A final
// newline does not count as a line. When the first line alone is over
// maxBytes nothing is kept and FirstLineExceedsLimit is set.
func TruncateHead(text string, maxLines, maxBytes int) (string, Truncation) {
	t, body, done := startTruncation(text, maxLines, maxBytes)
	if done {
		return text, t
	}
	pos, end := 0, 0 // the next line's start; the end of what is kept
	for t.OutputLines < maxLines && pos < len(body)+1 {
		lineEnd := len(body)
		if i := strings.IndexByte(body[pos:], '\n'); i >= 0 {
			lineEnd = pos + i
		}
		if lineEnd > maxBytes {
			t.TruncatedBy = "bytes"
			break
		}
		t.OutputLines++
		end, pos = lineEnd, lineEnd+1
	}
	t.FirstLineExceedsLimit = t.OutputLines == 0
	return finishTruncation(&t, body[:end])
}

// TruncateTail keeps the last whole lines of text that fit in maxLines
// lines and maxBytes bytes. When the last line alone is over maxBytes, its
// end is kept (cut at a character boundary) and LastLinePartial is set.
func TruncateTail(text string, maxLines, maxBytes int) (string, Truncation) {
	t, body, done := startTruncation(text, maxLines, maxBytes)
	if done {
		return text, t
	}
	start := len(body) // what is kept is body[start:]
	for t.OutputLines < maxLines {
		end := len(body)
		if t.OutputLines > 0 {
			end = start - 1 // the newline before the lines kept so far
		}
		lineStart := strings.LastIndexByte(body[:end], '\n') + 1
		if len(body)-lineStart > maxBytes {
			t.TruncatedBy = "bytes"
			if t.OutputLines == 0 {
				start = len(body) - maxBytes
				for start < len(body) && !utf8.RuneStart(body[start]) {
					start++
				}
				t.OutputLines = 1
				t.LastLinePartial = true
			}
			break
		}
		start = lineStart
		t.OutputLines++
		if start == 0 {
			break
		}
	}
	return finishTruncation(&t, body[start:])
}

// startTruncation measures text; done reports that it fits as it is. body
// is text without its final newline, which counts as no line.
func startTruncation(text string, maxLines, maxBytes int) (t Truncation, body string, done bool) {
	t = Truncation{TotalLines: countLines(text), TotalBytes: len(text), MaxLines: maxLines, MaxBytes: maxBytes}
	if t.TotalLines <= maxLines && t.TotalBytes <= maxBytes {
		t.OutputLines, t.OutputBytes = t.TotalLines, t.TotalBytes
		return t, text, true
	}
	t.Truncated = true
	t.TruncatedBy = "lines"
	return t, strings.TrimSuffix(text, "\n"), false
}

func finishTruncation(t *Truncation, out string) (string, Truncation) {
	t.OutputBytes = len(out)
	if t.OutputLines == t.TotalLines && !t.LastLinePartial {
		// Only the final newline was over the limit.
		t.Truncated, t.TruncatedBy = false, ""
	}
	return out, *t
}

// FormatSize prints a byte count for people: 12B, 4.5KB, 1.2MB (units of
// 1024, one decimal, halves rounded up).
func FormatSize(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1024*1024:
		return tenths(n, 1024) + "KB"
	default:
		return tenths(n, 1024*1024) + "MB"
	}
}

// tenths prints n/unit with one decimal, rounding half up.
func tenths(n, unit int64) string {
	t := (n*10 + unit/2) / unit
	return strconv.FormatInt(t/10, 10) + "." + strconv.FormatInt(t%10, 10)
}

// cutLine shortens a line to maxLineRunes characters, reporting whether it
// did.
func cutLine(line string) (string, bool) {
	if utf8.RuneCountInString(line) <= maxLineRunes {
		return line, false
	}
	i, n := 0, 0
	for n < maxLineRunes {
		_, size := utf8.DecodeRuneInString(line[i:])
		i += size
		n++
	}
	return line[:i] + lineCutMarker, true
}
