// Package proctest helps tests that start processes: it collects their
// output while the test reads it, and (on Unix) checks that the processes
// they caused to be started (a hook's children, say) have ended.
package proctest

import (
	"bytes"
	"context"
	"sync"
)

// Buffer collects what a process or a server goroutine writes while the
// test reads it: a bytes.Buffer safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote is closed (and replaced) at each write, for Await.
	wrote chan struct{}
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

// Await waits until cond holds for what was written so far, looking again
// after each write, or until ctx ends. It returns the text it looked at
// last and whether cond held for it.
func (s *Buffer) Await(ctx context.Context, cond func(string) bool) (string, bool) {
	for {
		s.mu.Lock()
		text := s.b.String()
		if cond(text) {
			s.mu.Unlock()
			return text, true
		}
		if s.wrote == nil {
			s.wrote = make(chan struct{})
		}
		wrote := s.wrote
		s.mu.Unlock()
		select {
		case <-wrote:
		case <-ctx.Done():
			return text, false
		}
	}
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
