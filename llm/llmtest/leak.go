package llmtest

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// CheckGoroutines snapshots the running goroutines and returns a function
// that fails the test if goroutines started since then that belong to
// Prime's llm packages or to a net/http connection are still running after
// a grace period (they may take a moment to notice a closed connection).
// Close idle client connections before calling the check: a pooled
// keep-alive connection is not a leak.
func CheckGoroutines(tb testing.TB) func() {
	tb.Helper()
	before := goroutines()
	return func() {
		tb.Helper()
		var leaked []string
		for deadline := time.Now().Add(10 * time.Second); ; {
			leaked = leaked[:0]
			for id, stack := range goroutines() {
				if _, old := before[id]; !old && relevant(stack) {
					leaked = append(leaked, stack)
				}
			}
			if len(leaked) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if len(leaked) > 0 {
			tb.Errorf("%d goroutine(s) outlived the stream:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
	}
}

func relevant(stack string) bool {
	return strings.Contains(stack, "github.com/prime-agent/prime/llm") ||
		strings.Contains(stack, "net/http.(*persistConn)") ||
		strings.Contains(stack, "net/http.(*conn).serve")
}

// goroutines returns the stack of every goroutine by its header line's id.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		header, _, _ := bytes.Cut(g, []byte("\n"))
		fields := bytes.Fields(header)
		if len(fields) >= 2 {
			out[string(fields[1])] = string(g)
		}
	}
	return out
}
