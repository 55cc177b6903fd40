package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/unicode/norm"

	"github.com/prime-agent/prime/llm"
)

type readTool struct{ env Env }

const readSchema = `{"type":"object","required":["path"],"properties":{` +
	`"path":{"type":"string","description":"The file to read, absolute or relative to the working directory"},` +
	`"offset":{"type":"number","description":"The first line to show, counting from 1"},` +
	`"limit":{"type":"number","description":"How many lines to show at most"}}}`

func (t *readTool) Spec() Spec {
	return Spec{
		Name: "read",
		Description: fmt.Sprintf("Read a file. Text is returned as it is, up to %d lines or %s per call; "+
			"a notice at the end tells you the offset to read on from. Use offset and limit to read part of a "+
			"large file. Images (JPEG, PNG, GIF, WebP, BMP) are returned as attachments you can see.",
			MaxLines, FormatSize(MaxBytes)),
		Parameters: jsontext.Value(readSchema),
		Snippet:    "Read a file (text, or an image to look at)",
		Guidelines: []string{"Read files with read, not with cat, head or sed in bash."},
	}
}

// Paths returns the file the call reads.
func (t *readTool) Paths(args jsontext.Value) []string { return t.env.pathOf(args, "") }

type readArgs struct {
	Path   string   `json:"path"`
	Offset *float64 `json:"offset"`
	Limit  *float64 `json:"limit"`
}

// sniffSize is how much of a file decides whether it is an image, binary
// or text.
const sniffSize = 8192

func (t *readTool) Run(ctx context.Context, call Call) (Result, error) {
	var a readArgs
	if err := decodeArgs("read", call.Args, &a); err != nil {
		return Result{}, err
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	env := t.env.confined(ctx)
	abs, err := env.resolve(a.Path)
	if err != nil {
		return Result{}, err
	}
	abs = existingVariant(abs)
	f, err := openRegular(abs)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	if err := env.checkOpened(f, a.Path); err != nil {
		return Result{}, err
	}
	head := make([]byte, sniffSize)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return Result{}, fmt.Errorf("cannot read %s: %w", abs, unwrapPath(err))
	}
	head = head[:n]
	if mime := imageType(head); mime != "" {
		return readImage(ctx, f, head, abs, mime)
	}
	if isBinary(head) {
		size := int64(n)
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		return textResult(fmt.Sprintf("[%s is a binary file (%s), not text, so it is not shown. "+
			"Inspect it with bash, for example with file or xxd.]", a.Path, FormatSize(size)), nil), nil
	}
	start := 0
	if a.Offset != nil && *a.Offset > 1 {
		start = int(min(*a.Offset, 1e15)) - 1
	}
	end := -1
	if a.Limit != nil {
		end = start + countArg(a.Limit, 0)
	}
	sel, err := selectLines(ctx, io.MultiReader(bytes.NewReader(head), f), start, end)
	if err != nil {
		if errors.Is(err, ErrAborted) {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("cannot read %s: %w", abs, unwrapPath(err))
	}
	if start >= sel.total {
		return Result{}, fmt.Errorf("offset=%d is past the end of %s, which has %d %s",
			start+1, a.Path, sel.total, plural(sel.total, "line", "lines"))
	}
	return sel.result(a.Path, start, end), nil
}

// openRegular opens a file to read, with errors that name its absolute path.
func openRegular(abs string) (*os.File, error) {
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist", abs)
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %w", abs, unwrapPath(err))
	case st.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file; list it with ls or bash", abs)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", abs, unwrapPath(err))
	}
	return f, nil
}

// unwrapPath drops the operation and path of an *fs.PathError, which the
// caller's message already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// amPM finds the " AM." of a macOS screenshot name, which has a narrow
// no-break space before AM or PM.
var amPM = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i) (AM|PM)\.`) })

// existingVariant returns abs, or when abs does not exist, the first of the
// spellings macOS gives such names that does: a narrow no-break space
// before AM/PM, decomposed accents (NFD), a curly apostrophe.
func existingVariant(abs string) string {
	if _, err := os.Lstat(abs); err == nil {
		return abs
	}
	nfd := norm.NFD.String(abs)
	for _, v := range []string{
		amPM().ReplaceAllString(abs, "\u202f$1."),
		nfd,
		strings.ReplaceAll(abs, "'", "\u2019"),
		strings.ReplaceAll(nfd, "'", "\u2019"),
	} {
		if v == abs {
			continue
		}
		if _, err := os.Lstat(v); err == nil {
			return v
		}
	}
	return abs
}

// imageType returns the MIME type of an image the model can be shown,
// judged by its first bytes, or "".
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	case len(head) >= 26 && string(head[:2]) == "BM" && bmpHeaderSize(head) > 0:
		return "image/bmp"
	}
	return ""
}

// bmpHeaderSize returns the size of a BMP's info header when it is one of
// the known ones, so that a text file starting with "BM" is not an image.
func bmpHeaderSize(head []byte) int {
	size := int(head[14]) | int(head[15])<<8 | int(head[16])<<16 | int(head[17])<<24
	switch size {
	case 12, 40, 52, 56, 64, 108, 124:
		return size
	}
	return 0
}

// isBinary judges the first bytes of a file: a NUL byte, or more than one
// byte in eight outside valid UTF-8, means it is not text.
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	invalid := 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			if len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:]) {
				break // a character cut by the end of the sample
			}
			invalid++
		}
		i += size
	}
	return invalid*8 > len(head)
}

func readImage(ctx context.Context, f *os.File, head []byte, abs, mime string) (Result, error) {
	rest, err := io.ReadAll(f)
	if err != nil {
		return Result{}, fmt.Errorf("cannot read %s: %w", abs, unwrapPath(err))
	}
	if err := aborted(ctx); err != nil {
		return Result{}, err
	}
	data := append(head, rest...)
	return Result{Content: []llm.Content{
		llm.Text{Text: fmt.Sprintf("Image file %s (%s, %s)", abs, mime, FormatSize(int64(len(data))))},
		llm.Image{Data: base64.StdEncoding.EncodeToString(data), MIMEType: mime},
	}}, nil
}

// selection is what selectLines keeps of a file: the selected lines that
// fit the limits, and counts of everything.
type selection struct {
	total          int      // lines in the file, counting the piece after a final newline
	lines          []string // selected lines kept
	selected       int      // selected lines, whether kept or not
	selectedBytes  int      // their size, newlines between them included
	firstLineBytes int      // size of the first selected line
	cutBy          string   // "lines" or "bytes" when not every selected line was kept
	keptBytes      int      // size of the lines kept, newlines between them included
	trailingEmpty  bool     // the selection ends with the empty piece after a final newline
	endsInNewline  bool     // the file's last piece is empty
}

// selectLines reads r and keeps lines [start, end) (end < 0: to the end)
// as far as they fit in MaxLines and MaxBytes. Lines over the byte limit
// are measured, never held whole. The piece after a final newline counts
// as a line of the file, as in pi, but never causes a cut.
func selectLines(ctx context.Context, r io.Reader, start, end int) (*selection, error) {
	s := &selection{}
	br := bufio.NewReaderSize(r, 64*1024)
	var cur []byte // the current selected line, while it may still fit
	curBytes := 0
	pieceBytes := 0 // size of the current line, selected or not
	keeping := true // no line has been cut yet
	line := 0
	for chunks := 0; ; chunks++ {
		if chunks%64 == 0 {
			if err := aborted(ctx); err != nil {
				return nil, err
			}
		}
		chunk, err := br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, err
		}
		atEOF := err == io.EOF
		complete := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		text := chunk
		if complete {
			text = chunk[:len(chunk)-1]
		}
		selected := line >= start && (end < 0 || line < end)
		pieceBytes += len(text)
		if selected {
			if keeping && curBytes <= MaxBytes {
				cur = append(cur, text[:min(len(text), MaxBytes+1-curBytes)]...)
			}
			curBytes += len(text)
		}
		if !complete && !atEOF {
			continue // the rest of a long line follows
		}
		if selected {
			trailingEmpty := atEOF && curBytes == 0 && s.selected > 0
			s.trailingEmpty = trailingEmpty
			if s.selected == 0 {
				s.firstLineBytes = curBytes
			} else {
				s.selectedBytes++ // the newline before this line
			}
			s.selected++
			s.selectedBytes += curBytes
			if keeping {
				sep := 0
				if len(s.lines) > 0 {
					sep = 1
				}
				switch {
				case trailingEmpty:
					s.lines = append(s.lines, "")
				case len(s.lines) >= MaxLines:
					keeping, s.cutBy = false, "lines"
				case s.keptBytes+sep+curBytes > MaxBytes:
					keeping, s.cutBy = false, "bytes"
				default:
					s.lines = append(s.lines, strings.ToValidUTF8(string(cur), "\ufffd"))
					s.keptBytes += sep + curBytes
				}
			}
			cur, curBytes = cur[:0], 0
		}
		if atEOF {
			s.total = line + 1
			s.endsInNewline = pieceBytes == 0 && line > 0
			return s, nil
		}
		pieceBytes = 0
		line++
	}
}

// result builds the read's text and notices.
func (s *selection) result(path string, start, end int) Result {
	first := start + 1
	if s.cutBy != "" && len(s.lines) == 0 {
		t := s.truncation()
		t.FirstLineExceedsLimit = true
		return textResult(fmt.Sprintf("[Line %d is %s, more than the %s a read returns. "+
			"Show part of it with bash: sed -n '%dp' %s | head -c %d]",
			first, FormatSize(int64(s.firstLineBytes)), FormatSize(MaxBytes), first, shellQuote(path), MaxBytes),
			detailsOf(map[string]any{"truncation": t}))
	}
	text := strings.Join(s.lines, "\n")
	last := start + len(s.lines)
	shown := fmt.Sprintf("Lines %d-%d of %d shown", first, last, s.total)
	if first == last {
		shown = fmt.Sprintf("Line %d of %d shown", first, s.total)
	}
	switch {
	case s.cutBy == "lines":
		text += fmt.Sprintf("\n\n[%s: a read returns at most %d lines. Read on with offset=%d.]", shown, MaxLines, last+1)
	case s.cutBy == "bytes":
		text += fmt.Sprintf("\n\n[%s: a read returns at most %s. Read on with offset=%d.]", shown, FormatSize(MaxBytes), last+1)
	case end >= 0 && end < s.total && !(s.endsInNewline && end == s.total-1):
		// (Only the empty piece after the final newline is left: nothing
		// worth reading on for.)
		left := s.total - end
		text += fmt.Sprintf("\n\n[%d more %s after line %d. Read on with offset=%d.]",
			left, plural(left, "line", "lines"), end, end+1)
	}
	if s.cutBy == "" {
		return textResult(text, nil)
	}
	return textResult(text, detailsOf(map[string]any{"truncation": s.truncation()}))
}

// truncation describes the cut; like [TruncateHead], it counts no line
// for the empty piece after a final newline.
func (s *selection) truncation() Truncation {
	total := s.selected
	if s.trailingEmpty {
		total--
	}
	return Truncation{
		Truncated: true, TruncatedBy: s.cutBy,
		TotalLines: total, TotalBytes: s.selectedBytes,
		OutputLines: len(s.lines), OutputBytes: s.keptBytes,
		MaxLines: MaxLines, MaxBytes: MaxBytes,
	}
}

func textResult(text string, details jsontext.Value) Result {
	return Result{Content: []llm.Content{llm.Text{Text: text}}, Details: details}
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
