package tui

import (
	"io"
	"sync"
	"time"
)

// drawClock tells when a frame has reached the terminal. bubbletea draws on
// a ticker of its own and says nothing when it has; a print (which the
// renderer inserts above the frame last drawn) must not land while a taller
// frame than the model's latest is still on the screen. The clock counts
// the views the model has produced and the writes that reached the
// terminal: the renderer writes a frame under the lock that also guards
// storing the next view, so a write that completes after a view was
// produced draws that view or a later one.
type drawClock struct {
	w io.Writer

	mu     sync.Mutex
	views  uint64 // views produced so far
	writes uint64 // writes completed so far
	// seen holds, for recent views, the writes completed when each was
	// produced (view v at seen[v%len(seen)]).
	seen [32]struct{ view, writes uint64 }
	wake chan struct{} // closed and replaced on each write
}

// newDrawClock returns a clock counting the writes that pass through it to w.
func newDrawClock(w io.Writer) *drawClock {
	return &drawClock{w: w, wake: make(chan struct{})}
}

// Write writes p to the terminal and counts it.
func (c *drawClock) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.mu.Lock()
	c.writes++
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
	return n, err
}

// viewed notes that the model produced a view and returns its number.
func (c *drawClock) viewed() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.views++
	c.seen[c.views%uint64(len(c.seen))] = struct{ view, writes uint64 }{c.views, c.writes}
	return c.views
}

// next is the number the next view will have.
func (c *drawClock) next() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.views + 1
}

// drawnSince reports whether view v, or a later one, has been written;
// the caller holds mu.
func (c *drawClock) drawnSince(v uint64) bool {
	if c.views < v {
		return false
	}
	at := c.seen[v%uint64(len(c.seen))]
	if at.view != v {
		// Pushed out by later views: any write since the oldest kept
		// one draws a view after v.
		at = c.seen[(c.views+1)%uint64(len(c.seen))]
	}
	return c.writes > at.writes
}

// wait blocks until view v (or a later one) has been written, or bound has
// passed: a frame the renderer found equal to the one on the screen is not
// written again, and a starved renderer must not hold the transcript back
// for ever.
func (c *drawClock) wait(v uint64, bound time.Duration) {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		c.mu.Lock()
		done, wake := c.drawnSince(v), c.wake
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-wake:
		case <-timer.C:
			return
		}
	}
}

// ttyFile is a terminal's file as bubbletea wants its output: it puts the
// terminal in raw mode and reads its size through Fd.
type ttyFile interface {
	io.ReadWriteCloser
	Fd() uintptr
}

// drawTTY is a drawClock over a terminal's file, still a terminal's file.
type drawTTY struct {
	*drawClock
	f ttyFile
}

func (t drawTTY) Read(p []byte) (int, error) { return t.f.Read(p) }
func (t drawTTY) Close() error               { return t.f.Close() }
func (t drawTTY) Fd() uintptr                { return t.f.Fd() }

// output is what the program writes to: the clock, a terminal's file when
// what it wraps is one.
func (c *drawClock) output() io.Writer {
	if f, ok := c.w.(ttyFile); ok {
		return drawTTY{c, f}
	}
	return c
}
