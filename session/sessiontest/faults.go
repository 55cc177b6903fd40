package sessiontest

import (
	"bytes"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/prime-agent/prime/session"
)

// WriteFault is what one write of a session file does instead of writing
// (see session.Options.Write): the disk faults of a fault-injection test.
type WriteFault struct {
	Name string
	// Do writes some of p to f, or none, and says what happened.
	Do func(f *os.File, p []byte) (int, error)
}

// WriteFaults returns the faults a fault-injection test tries at every
// write: ENOSPC and EIO before any byte, a short write followed by ENOSPC
// or EIO (all but the newline), and a short write that reports no error.
func WriteFaults() []WriteFault {
	return []WriteFault{
		{"ENOSPC", func(*os.File, []byte) (int, error) { return 0, syscall.ENOSPC }},
		{"EIO", func(*os.File, []byte) (int, error) { return 0, syscall.EIO }},
		{"short write then ENOSPC", func(f *os.File, p []byte) (int, error) {
			n, _ := f.Write(p[:len(p)/2])
			return n, syscall.ENOSPC
		}},
		{"short write then EIO", func(f *os.File, p []byte) (int, error) {
			n, _ := f.Write(p[:len(p)-1])
			return n, syscall.EIO
		}},
		{"short write, no error", func(f *os.File, p []byte) (int, error) {
			return f.Write(p[:1+len(p)/3])
		}},
	}
}

// FaultAt fails the write numbered At (0-based, counted over every write
// made through it) once, with Fault; the others go through. A negative At
// fails none: a clean run that counts its writes. It is safe for
// concurrent use.
type FaultAt struct {
	At    int
	Fault WriteFault

	writes atomic.Int64
	fired  atomic.Bool
	mu     sync.Mutex
	failed []byte
}

// Write is a session.WriteFunc.
func (f *FaultAt) Write(file *os.File, p []byte) (int, error) {
	if int(f.writes.Add(1)-1) == f.At && f.fired.CompareAndSwap(false, true) {
		f.mu.Lock()
		f.failed = bytes.Clone(p)
		f.mu.Unlock()
		return f.Fault.Do(file, p)
	}
	return file.Write(p)
}

// Writes returns how many writes were made.
func (f *FaultAt) Writes() int { return int(f.writes.Load()) }

// Fired reports whether the fault was injected.
func (f *FaultAt) Fired() bool { return f.fired.Load() }

// Failed returns what the failed write was to write.
func (f *FaultAt) Failed() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// Holds asserts that the session file at path loads without a warning,
// ends with a whole line, and holds exactly the entries whose ids are want,
// in file order: after a fault, what was acknowledged and nothing else.
// where names the case in messages.
func Holds(tb testing.TB, path string, want []string, where string) {
	tb.Helper()
	s, err := session.Load(path)
	if err != nil {
		tb.Fatalf("%s: the file does not load: %v", where, err)
	}
	defer s.Close()
	if w := s.Warnings(); len(w) > 0 {
		tb.Errorf("%s: warnings %v", where, w)
	}
	var got []string
	for _, e := range s.Entries() {
		got = append(got, e.ID)
	}
	if !slices.Equal(got, want) {
		tb.Errorf("%s: the file holds %d entries %v, want the %d acknowledged %v", where, len(got), got, len(want), want)
	}
	if b, _ := os.ReadFile(path); len(b) > 0 && b[len(b)-1] != '\n' {
		tb.Errorf("%s: the file ends in a torn line", where)
	}
}
