package session

import (
	"errors"
	"fmt"
)

// ErrNotFound reports an entry id that is not in the session, or a session
// that does not exist.
var ErrNotFound = errors.New("not found")

// NotSessionError reports a file that is not a session file: it is empty, or
// its first JSON line is not a session header. Such a file is never written
// to.
type NotSessionError struct {
	Path   string
	Reason string
}

func (e *NotSessionError) Error() string {
	return fmt.Sprintf("%s is not a session file: %s", e.Path, e.Reason)
}

// WarningKind classifies a [Warning].
type WarningKind int

// Kinds of warnings the loader reports.
const (
	// WarnMalformed: a line that is not valid JSON, or not an entry object.
	// It is skipped, as pi skips it.
	WarnMalformed WarningKind = iota + 1
	// WarnTornTail: the last line is incomplete and has no newline, the
	// mark of a crash in the middle of an append. It is skipped; the next
	// append starts on a fresh line.
	WarnTornTail
	// WarnDuplicateID: two entries share an id. Lookups find the later one,
	// as in pi.
	WarnDuplicateID
	// WarnMissingID: an entry has no id; it cannot be a parent or be looked
	// up, but it is kept.
	WarnMissingID
	// WarnCycle: parent links form a cycle; the entry named becomes a root.
	WarnCycle
	// WarnNewerVersion: the header names a format version newer than
	// Prime's. The file is read as version 3 and is not appended to.
	WarnNewerVersion
	// WarnCoerced: an entry has a field of the wrong type; it was read as
	// pi reads it (see [Repair] and the package's tolerant reading). Told
	// once an entry has been decoded.
	WarnCoerced
	// WarnUnreadable: an entry does not decode even coerced; it is left
	// out of the context. Told once an entry has been decoded.
	WarnUnreadable
	// WarnSecondHeader: a session header after the first line, as when
	// two session files were joined. It is kept as an entry the model
	// never sees.
	WarnSecondHeader
	// WarnIndex: the persistent index of the file (a cache) did not
	// describe it; it was dropped and the file indexed again.
	WarnIndex
)

// Warning is a problem found while reading a session file that did not stop
// it from loading.
type Warning struct {
	Kind WarningKind
	// Line is the 1-based line number the warning is about, or 0.
	Line int
	// Msg says what is wrong, e.g. `malformed JSON: unexpected EOF`.
	Msg string
}

// String formats the warning as "line 12: msg".
func (w Warning) String() string {
	if w.Line == 0 {
		return w.Msg
	}
	return fmt.Sprintf("line %d: %s", w.Line, w.Msg)
}
