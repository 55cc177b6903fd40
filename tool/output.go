package tool

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// output collects a command's output with bounded memory: all of it while
// it is within the limits, then only a tail of it, the whole being written
// to a temporary file from the moment it goes over.
type output struct {
	tempDir string

	buf      []byte // all output, or once spilled its last bytes
	dropped  bool   // buf no longer starts at the beginning of the output
	atLine   bool   // when dropped: buf starts at the beginning of a line
	total    int64  // bytes so far
	newlines int
	curLine  int64 // bytes since the last newline
	prevLine int64 // bytes of the last complete line

	file    *os.File // the full output, once over the limits
	path    string
	fileErr error
	// filed is how much output went to the file: its first FullOutputHead
	// bytes as they came, then the last FullOutputTail bytes in a ring
	// after them, put in order when the file is closed.
	filed int64
}

// The full-output file keeps the first FullOutputHead and the last
// FullOutputTail bytes of a command's output, with a line saying how much
// was left out between them: a command that writes without end (yes) fills
// no disk.
const (
	FullOutputHead = 16 << 20
	FullOutputTail = 16 << 20
)

// tailKeep is how much of the output is kept once it is over the limits;
// the buffer is trimmed back to it when it reaches twice as much.
const tailKeep = 2 * MaxBytes

func (o *output) write(p []byte) {
	o.total += int64(len(p))
	if n := bytes.Count(p, []byte{'\n'}); n > 0 {
		o.newlines += n
		last := bytes.LastIndexByte(p, '\n')
		prev := bytes.LastIndexByte(p[:last], '\n')
		if prev >= 0 {
			o.prevLine = int64(last - prev - 1)
		} else {
			o.prevLine = o.curLine + int64(last)
		}
		o.curLine = int64(len(p) - last - 1)
	} else {
		o.curLine += int64(len(p))
	}
	o.buf = append(o.buf, p...)
	if o.file == nil && o.fileErr == nil && o.over() {
		o.spill()
	} else if o.file != nil {
		o.toFile(p)
	}
	if o.over() && len(o.buf) > 2*tailKeep {
		cut := len(o.buf) - tailKeep
		for cut < len(o.buf) && !utf8.RuneStart(o.buf[cut]) {
			cut++
		}
		o.atLine = o.buf[cut-1] == '\n'
		o.dropped = true
		o.buf = append(o.buf[:0], o.buf[cut:]...)
	}
}

// lines counts lines as [TruncateTail] does.
func (o *output) lines() int {
	if o.curLine > 0 {
		return o.newlines + 1
	}
	return o.newlines
}

func (o *output) over() bool { return o.total > MaxBytes || o.lines() > MaxLines }

// spill starts the temporary file with everything so far, which is all in
// buf since nothing is dropped before the output goes over the limits.
func (o *output) spill() {
	dir := o.tempDir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "prime-bash-*.log") // mode 0600
	if err != nil {
		o.fileErr = err
		return
	}
	o.file, o.path = f, f.Name()
	o.toFile(o.buf)
}

// toFile adds p to the full-output file: to its head while there is room,
// then to the tail's ring.
func (o *output) toFile(p []byte) {
	if o.fileErr != nil {
		return
	}
	if room := FullOutputHead - o.filed; room > 0 {
		n := min(int64(len(p)), room)
		if _, err := o.file.Write(p[:n]); err != nil {
			o.fileErr = err
			return
		}
		o.filed += n
		p = p[n:]
	}
	for len(p) > 0 {
		at := (o.filed - FullOutputHead) % FullOutputTail
		n := min(int64(len(p)), FullOutputTail-at)
		if _, err := o.file.WriteAt(p[:n], FullOutputHead+at); err != nil {
			o.fileErr = err
			return
		}
		o.filed += n
		p = p[n:]
	}
}

// finishFile puts the tail's ring in order behind a line saying how much
// was left out, once more than head and tail were written.
func (o *output) finishFile() error {
	cut := o.filed - FullOutputHead - FullOutputTail
	if cut <= 0 {
		return nil
	}
	ring := make([]byte, FullOutputTail)
	if _, err := o.file.ReadAt(ring, FullOutputHead); err != nil {
		return err
	}
	at := (o.filed - FullOutputHead) % FullOutputTail
	marker := fmt.Sprintf("\n[... %s of output left out here: the file keeps the first %s and the last %s ...]\n",
		FormatSize(cut), FormatSize(FullOutputHead), FormatSize(FullOutputTail))
	tail := append(append([]byte(marker), ring[at:]...), ring[:at]...)
	if _, err := o.file.WriteAt(tail, FullOutputHead); err != nil {
		return err
	}
	return o.file.Truncate(FullOutputHead + int64(len(tail)))
}

// close finishes the temporary file.
func (o *output) close() {
	if o.file != nil {
		if o.fileErr == nil {
			o.fileErr = o.finishFile()
		}
		if err := o.file.Close(); err != nil && o.fileErr == nil {
			o.fileErr = err
		}
		o.file = nil
	}
}

// snapshot returns the tail to show and how it was cut.
func (o *output) snapshot() (string, Truncation) {
	b := o.buf
	if o.dropped && !o.atLine {
		// The first line in buf is the end of a longer one: leave it out,
		// unless buf is all one line.
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	text, t := TruncateTail(strings.ToValidUTF8(string(b), "\ufffd"), MaxLines, MaxBytes)
	t.TotalLines, t.TotalBytes = o.lines(), int(o.total)
	if !o.over() {
		return text, t
	}
	t.Truncated = true
	if t.TruncatedBy == "" {
		t.TruncatedBy = "lines"
		if o.total > MaxBytes {
			t.TruncatedBy = "bytes"
		}
	}
	return text, t
}

// lastLine is the size of the output's last line.
func (o *output) lastLine() int64 {
	if o.curLine > 0 {
		return o.curLine
	}
	return o.prevLine
}

// notice says how the shown output was cut and where the rest is, or ""
// when nothing was cut.
func (o *output) notice(t Truncation) string {
	if !t.Truncated {
		return ""
	}
	end := t.TotalLines
	start := end - t.OutputLines + 1
	var shown string
	switch {
	case t.LastLinePartial:
		shown = fmt.Sprintf("the last %s of line %d, which is %s long", FormatSize(int64(t.OutputBytes)), end, FormatSize(o.lastLine()))
	case t.TruncatedBy == "bytes":
		shown = fmt.Sprintf("lines %d-%d of %d (the last %s)", start, end, t.TotalLines, FormatSize(MaxBytes))
	default:
		shown = fmt.Sprintf("lines %d-%d of %d", start, end, t.TotalLines)
	}
	where := "The full output is in " + o.path
	if o.filed > FullOutputHead+FullOutputTail {
		where = fmt.Sprintf("Its first %s and last %s are in %s", FormatSize(FullOutputHead), FormatSize(FullOutputTail), o.path)
	}
	if o.fileErr != nil {
		where = "The full output could not be saved: " + o.fileErr.Error()
	}
	return fmt.Sprintf("[Output cut: showing %s. %s]", shown, where)
}
