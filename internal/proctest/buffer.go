// Package proctest helps tests that start processes: it collects their
// output while the test reads it, and (on Unix) checks that the processes
// they caused to be started (a hook's children, say) have ended.
package proctest

import (
	"bytes"
	"sync"
)

// Buffer collects what a process or a server goroutine writes while the
// test reads it: a bytes.Buffer safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
