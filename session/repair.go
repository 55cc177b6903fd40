package session

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/prime-agent/prime/internal/atomicfile"
)

// Check reads every entry of the session file at path, as resuming it
// would, and returns every problem found: the loader's warnings, then the
// entries read only by coercing a field (as pi reads them) and those that
// cannot be read at all. None means the file is sound.
func Check(path string) ([]Warning, error) {
	s, err := Load(path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for _, e := range s.Entries() {
		if e.Type == TypeMessage {
			e.Message()
		} else {
			e.Payload()
		}
	}
	return s.Warnings(), nil
}

// Fix is one change [Repair] made, or would make.
type Fix struct {
	// Line is the line of the original file.
	Line int
	// What says what was done: "dropped: malformed JSON: …", "/summary: 42
	// is not text; read as \"42\"".
	What string
}

func (f Fix) String() string { return fmt.Sprintf("line %d: %s", f.Line, f.What) }

// RepairResult says what [Repair] did.
type RepairResult struct {
	// Fixes are the changes, in line order. None means the file was left
	// as it was (and no backup was made).
	Fixes []Fix
	// Left are the problems a repair cannot fix (a duplicate id, a cycle,
	// an entry that cannot be read even coerced): the file keeps them, as
	// pi would read them.
	Left []Warning
	// Backup is the copy of the original file, path+".bak", when the file
	// was rewritten.
	Backup string
}

// Repair rewrites the session file at path so that every line reads
// without coercion: a field of the wrong type is written as pi reads it
// (see [WarnCoerced]), a line that is not a JSON entry (a torn or
// malformed one, which every reader skips) is dropped, and an unfinished
// last line that is whole JSON gets its newline. The original is kept as
// path+".bak"; the new file replaces it atomically, under the file's lock.
// Nothing is written when there is nothing to fix.
func Repair(path string) (*RepairResult, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	defer unlockFile(f)
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, err := readAll(f, int(fi.Size()))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if _, err := Parse(path, data); err != nil {
		return nil, err // not a session: nothing to repair
	}
	res := &RepairResult{}
	out := make([]byte, 0, len(data))
	for num, rest := 1, data; len(rest) > 0; num++ {
		line, after, hasNL := bytes.Cut(rest, []byte{'\n'})
		rest = after
		if num == 1 {
			out = append(append(out, line...), '\n')
			continue
		}
		fixed, fix := repairLine(line)
		if fix != "" {
			res.Fixes = append(res.Fixes, Fix{Line: num, What: fix})
		}
		if fixed == nil {
			continue
		}
		if !hasNL && fix == "" {
			res.Fixes = append(res.Fixes, Fix{Line: num, What: "the last line had no newline; added"})
		}
		out = append(append(out, fixed...), '\n')
	}
	s, err := Parse(path, out)
	if err != nil {
		return nil, fmt.Errorf("the repaired %s does not read back: %w", path, err)
	}
	for _, e := range s.Entries() {
		if e.Type == TypeMessage {
			e.Message()
		} else {
			e.Payload()
		}
	}
	res.Left = s.Warnings()
	if len(res.Fixes) == 0 {
		return res, nil
	}
	mode := fi.Mode().Perm()
	res.Backup = path + ".bak"
	if err := atomicfile.WriteFile(res.Backup, data, mode); err != nil {
		return nil, fmt.Errorf("keeping a backup of %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, out, mode); err != nil {
		return nil, fmt.Errorf("rewriting %s: %w", path, err)
	}
	return res, nil
}

// repairLine returns the line to write for an entry line (nil: drop it)
// and what it changed ("" for nothing).
func repairLine(line []byte) ([]byte, string) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, "dropped: an empty line"
	}
	e, err := NewEntry(line)
	if err != nil {
		return nil, "dropped: " + err.Error()
	}
	if strictOK(e, line) {
		return line, ""
	}
	fixed, notes, ok := coerceLine(line)
	if ok && strictOK(e, fixed) {
		return fixed, strings.Join(notes, "; ")
	}
	return line, "" // left: Left lists it
}

// strictOK reports whether line decodes as entry e's type without
// coercion.
func strictOK(e *Entry, line []byte) bool {
	if e.Type == TypeMessage {
		_, err := e.decodeMessageStrict(line)
		return err == nil
	}
	if knownPayload(e.Type) == nil {
		return true
	}
	_, err := decodePayload(e.Type, line)
	return err == nil
}
