package tui

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"
)

// A print waits for a write that follows the view it needs: writes before
// that view do not count, one after it ends the wait at once, and with none
// the wait ends at its bound.
func TestDrawClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		c := newDrawClock(&out)
		c.viewed()
		c.Write([]byte("frame 1"))
		v := c.next()
		c.viewed()
		done := make(chan time.Time)
		start := time.Now()
		go func() { c.wait(v, time.Second); done <- time.Now() }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("the wait ended before the view was written")
		default:
		}
		time.Sleep(10 * time.Millisecond)
		c.Write([]byte("frame 2"))
		if at := <-done; at.Sub(start) != 10*time.Millisecond {
			t.Errorf("the wait ended %v after it began, want at the write (10ms)", at.Sub(start))
		}

		// Already written: at once.
		start = time.Now()
		c.wait(v, time.Second)
		if d := time.Since(start); d != 0 {
			t.Errorf("a written view waited %v", d)
		}

		// Never written: the bound.
		v = c.next()
		c.viewed()
		start = time.Now()
		c.wait(v, time.Second)
		if d := time.Since(start); d != time.Second {
			t.Errorf("an unwritten view waited %v, want the bound", d)
		}

		// A view pushed out of the ring by later ones is written by any
		// write after the oldest kept.
		old := c.next()
		for range 3 * len(c.seen) {
			c.viewed()
		}
		c.mu.Lock()
		if c.drawnSince(old) {
			t.Error("a view counts as written before any write after it")
		}
		c.mu.Unlock()
		c.Write([]byte("frame 3"))
		c.mu.Lock()
		if !c.drawnSince(old) {
			t.Error("a write after the views does not draw the old one")
		}
		c.mu.Unlock()
		if got := out.String(); got != "frame 1frame 2frame 3" {
			t.Errorf("written %q", got)
		}
	})
}
