package mcp

import (
	"bufio"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// envHostile is what the hostile server does when its tool "act" is called.
const envHostile = "PRIME_MCP_TEST_HOSTILE"

// serveHostile speaks just enough MCP over stdio, by hand, to initialize
// and list one tool, "act"; a call of it does what mode says, as a broken or
// hostile server would.
func serveHostile(mode string) {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	send := func(v any) {
		b, err := stdjson.Marshal(v)
		if err != nil {
			panic(err)
		}
		out.Write(b)
		out.WriteByte('\n')
		if out.Flush() != nil {
			os.Exit(0)
		}
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var req struct {
			ID     stdjson.RawMessage `json:"id"`
			Method string             `json:"method"`
		}
		if stdjson.Unmarshal(line, &req) != nil {
			continue
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}) }
		text := func(s string) map[string]any {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
		}
		switch req.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": "2025-06-18", "serverInfo": map[string]any{"name": "hostile", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}})
		case "tools/list":
			reply(map[string]any{"tools": []any{map[string]any{"name": "act", "inputSchema": map[string]any{"type": "object"}}}})
		case "logging/setLevel":
			reply(map[string]any{})
		case "tools/call":
			switch mode {
			case "hugeline", "endless":
				// One line without end: 200 MB, or as long as Prime reads.
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
				chunk := []byte(strings.Repeat("a", 1<<20))
				for i := 0; mode == "endless" || i < 200; i++ {
					if _, err := out.Write(chunk); err != nil {
						os.Exit(0)
					}
				}
				out.Flush()
				select {}
			case "big":
				// Over the SDK's own 16 MB line limit, within Prime's.
				reply(text("START" + strings.Repeat("b", 20<<20) + "END"))
			case "silent":
			case "flood":
				// Log messages as fast as the pipe takes them, then the answer.
				end := time.Now().Add(3 * time.Second)
				var n int
				for ; time.Now().Before(end); n++ {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
						"params": map[string]any{"level": "error", "logger": "flood", "data": "message " + strconv.Itoa(n) + strings.Repeat(" x", 100)}})
				}
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
					"params": map[string]any{"level": "error", "logger": "flood", "data": "LONG" + strings.Repeat("y", 1<<20)}})
				reply(text("survived " + strconv.Itoa(n)))
			case "pingflood":
				// Requests as fast as the pipe takes them, their answers
				// never read.
				end := time.Now().Add(8 * time.Second)
				var n int
				for ; time.Now().Before(end); n++ {
					send(map[string]any{"jsonrpc": "2.0", "id": "p" + strconv.Itoa(n), "method": "ping"})
				}
				reply(text("survived " + strconv.Itoa(n)))
			case "exit":
				fmt.Fprintln(os.Stderr, "fatal: out of cheese")
				os.Exit(9)
			case "killgroup":
				_ = syscall.Kill(0, syscall.SIGKILL)
				select {}
			case "notjson":
				fmt.Fprintln(out, "Server listening on port 8080")
				out.Flush()
			case "badcontent":
				reply(map[string]any{"content": []any{map[string]any{"type": "hologram", "text": "?"}}})
			case "contentnotlist":
				reply(map[string]any{"content": "just a string"})
			case "badimage":
				reply(map[string]any{"content": []any{map[string]any{"type": "image", "data": "!!not base64!!", "mimeType": "image/png"}}})
			default:
				reply(text("ok"))
			}
		default:
			if len(req.ID) > 0 {
				send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
	}
}

// hostile is a stdio entry running this test binary as a hostile server.
func hostile(t testing.TB, name, mode string) Server {
	t.Helper()
	return selfServer(t, name, "hostile", envHostile+"="+mode)
}

// peakHeap samples the heap in use until stop is called, and returns the
// most seen above what was in use at the start.
func peakHeap() (stop func() uint64) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

func runAct(t *testing.T, m *Manager, server string, timeout time.Duration) (tool.Result, error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	res, err := findTool(t, m, "mcp__"+server+"__act").Run(ctx, tool.Call{Args: jsontext.Value(`{}`)})
	return res, err, time.Since(start)
}

// A server that writes one line without end loses its connection once the
// line passes the limit, with an error naming the server and the limit;
// Prime's memory stays bounded, and the other servers go on.
func TestHugeLine(t *testing.T) {
	for _, mode := range []string{"hugeline", "endless"} {
		t.Run(mode, func(t *testing.T) {
			m, rep := startManager(t, hostile(t, "huge", mode), selfServer(t, "faults", "tools"))
			stop := peakHeap()
			_, err, _ := runAct(t, m, "huge", bound)
			peak := stop()
			t.Logf("peak heap growth %d MB; error: %v", peak>>20, err)
			if err == nil || !strings.Contains(err.Error(), "MCP server huge") || !strings.Contains(err.Error(), "32 MB") {
				t.Errorf("error %v", err)
			}
			if peak > 160<<20 {
				t.Errorf("the heap grew by %d MB", peak>>20)
			}
			if _, err := call(t, findTool(t, m, "mcp__faults__echo"), `{}`); err != nil {
				t.Errorf("the other server: %v", err)
			}
			waitFor(t, func() bool { return m.Status()[0].State != StateConnected })
			if !strings.Contains(m.Status()[0].Error+rep.text(), "32 MB") {
				t.Errorf("status %q, reports %q", m.Status()[0].Error, rep.text())
			}
		})
	}
}

// A message under the limit but over the SDK's own 16 MB one is read.
func TestBigResult(t *testing.T) {
	m, _ := startManager(t, hostile(t, "big", "big"))
	res, err, _ := runAct(t, m, "big", bound)
	if err != nil {
		t.Fatal(err)
	}
	if text := llm.TextOf(res.Content); !strings.HasPrefix(text, "START") || !strings.HasSuffix(text, "END") {
		t.Errorf("result %.100q", text)
	}
}

// A server that never answers a call: the entry's timeout ends the call,
// and cancelling the caller's context ends it at once.
func TestNeverAnswers(t *testing.T) {
	srv := hostile(t, "mute", "silent")
	srv.Timeout = time.Second
	m, _ := startManager(t, srv)
	_, err, took := runAct(t, m, "mute", bound)
	if err == nil || !strings.Contains(err.Error(), "MCP server mute did not answer within 1s") || took > 30*time.Second {
		t.Errorf("after %v: %v", took, err)
	}

	m.mu.Lock()
	m.servers[0].cfg.Timeout = bound
	m.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := findTool(t, m, "mcp__mute__act").Run(ctx, tool.Call{Args: jsontext.Value(`{}`)})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancelled := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || time.Since(cancelled) > 5*time.Second {
			t.Errorf("cancelled call after %v: %v", time.Since(cancelled), err)
		}
	case <-time.After(bound):
		t.Fatal("the cancelled call did not return")
	}
}

// A server flooding log messages: the call still completes, memory stays
// bounded and each logged message is bounded.
// A server flooding requests without reading their answers: Prime's
// memory stays bounded, and the call ends at the entry's timeout.
func TestRequestFlood(t *testing.T) {
	srv := hostile(t, "flood", "pingflood")
	srv.Timeout = 4 * time.Second
	m, _ := startManager(t, srv)
	stop := peakHeap()
	res, err, took := runAct(t, m, "flood", bound)
	peak := stop()
	t.Logf("after %v, peak heap growth %d MB: %s %v", took, peak>>20, llm.TextOf(res.Content), err)
	if err == nil || !strings.Contains(err.Error(), "did not answer within 4s") || took > 30*time.Second {
		t.Errorf("after %v: %v", took, err)
	}
	if peak > 64<<20 {
		t.Errorf("the heap grew by %d MB", peak>>20)
	}
}

func TestLogFlood(t *testing.T) {
	logFile := t.TempDir() + "/mcp.log"
	srv := hostile(t, "flood", "flood")
	rep := &reports{}
	m := NewManager([]Server{srv}, Options{OnReport: rep.add, TempDir: t.TempDir(), LogFile: logFile})
	t.Cleanup(func() { m.Close() })
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	stop := peakHeap()
	res, err, took := runAct(t, m, "flood", bound)
	peak := stop()
	t.Logf("after %v, peak heap growth %d MB: %s", took, peak>>20, llm.TextOf(res.Content))
	if err != nil || !strings.HasPrefix(llm.TextOf(res.Content), "survived") {
		t.Fatalf("%+v %v", res, err)
	}
	if peak > 100<<20 {
		t.Errorf("the heap grew by %d MB", peak>>20)
	}
	// The messages are handled apart from the answer, and may follow it.
	var data []byte
	waitFor(t, func() bool {
		data, err = os.ReadFile(logFile)
		return err == nil && strings.Contains(string(data), "LONG")
	})
	for _, line := range strings.Split(string(data), "\n") {
		if len(line) > maxLogMessage+200 {
			t.Errorf("a log line of %d bytes: %.120s", len(line), line)
		}
	}
	if !strings.Contains(string(data), "bytes cut)") {
		t.Errorf("the long message is not cut")
	}
}

// A server that ends during a call: the call fails naming the server and
// how it ended, and the next call starts it again.
func TestDiesMidCall(t *testing.T) {
	for _, c := range []struct{ mode, want string }{
		{"exit", "exit status 9"},
		{"killgroup", "killed"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			m, rep := startManager(t, hostile(t, "dying", c.mode))
			_, err, _ := runAct(t, m, "dying", bound)
			if err == nil || !strings.Contains(err.Error(), "MCP server dying") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v", err)
			}
			if c.mode == "exit" && !strings.Contains(err.Error(), "out of cheese") {
				t.Errorf("error without the stderr: %v", err)
			}
			if st := m.Status()[0]; st.State == StateConnected {
				t.Errorf("status after: %s", st.State)
			}
			// The next call starts it again (and it dies again).
			_, err, _ = runAct(t, m, "dying", bound)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("the second call: %v (reports %q)", err, rep.text())
			}
		})
	}
}

// Output that is not JSON-RPC, or a result with content Prime cannot read:
// a clear error naming the server, and no panic.
func TestGarbage(t *testing.T) {
	for _, c := range []struct{ mode, want string }{
		{"notjson", "not JSON"},
		{"badcontent", "hologram"},
		{"contentnotlist", "content"},
		{"badimage", "base64"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			m, _ := startManager(t, hostile(t, "junk", c.mode))
			_, err, _ := runAct(t, m, "junk", bound)
			t.Logf("%v", err)
			if err == nil || !strings.Contains(err.Error(), "MCP server junk") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v", err)
			}
		})
	}
}

// hostileHTTP is a streamable HTTP server answering every request with
// JSON, except a call of its tool "act": that answer (a JSON body, or an
// event of an event stream) is 200 MB without end.
func hostileHTTP(t *testing.T, stream bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     stdjson.RawMessage `json:"id"`
			Method string             `json:"method"`
		}
		if err := stdjson.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "initialize":
			reply["result"] = map[string]any{"protocolVersion": "2025-06-18", "serverInfo": map[string]any{"name": "hostile", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}}}
		case "tools/list":
			reply["result"] = map[string]any{"tools": []any{map[string]any{"name": "act", "inputSchema": map[string]any{"type": "object"}}}}
		case "tools/call":
			start := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
			if stream {
				w.Header().Set("Content-Type", "text/event-stream")
				start = "event: message\ndata: " + start
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			if _, err := io.WriteString(w, start); err != nil {
				return
			}
			chunk := []byte(strings.Repeat("a", 1<<20))
			for range 200 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = stdjson.NewEncoder(w).Encode(reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A streamable HTTP server whose answer has no end: the call fails naming
// the server and the limit, and Prime's memory stays bounded.
func TestHugeHTTPAnswer(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := hostileHTTP(t, stream)
			m, _ := startManager(t, Server{Name: "web", Transport: TransportHTTP, URL: srv.URL + "/mcp", Enabled: true, Timeout: bound})
			stop := peakHeap()
			_, err, _ := runAct(t, m, "web", bound)
			peak := stop()
			t.Logf("peak heap growth %d MB; error: %v", peak>>20, err)
			if err == nil || !strings.Contains(err.Error(), "MCP server web") || !strings.Contains(err.Error(), strconv.Itoa(MaxMessageBytes>>20)) {
				t.Errorf("error %v", err)
			}
			if peak > 160<<20 {
				t.Errorf("the heap grew by %d MB", peak>>20)
			}
		})
	}
}

// lineReader bounds each line, not the output: many lines within the
// limit pass, however much they add up to, and a line past it fails.
func TestLineReader(t *testing.T) {
	for _, c := range []struct {
		name, input string
		ok          bool
	}{
		{"short lines", strings.Repeat("0123456789\n", 1000), true},
		{"a line at the limit", strings.Repeat("a", 16) + "\n" + strings.Repeat("b", 16) + "\n", true},
		{"a line over the limit", "ok\n" + strings.Repeat("a", 17) + "\n", false},
		{"no newline, over", strings.Repeat("a", 100), false},
		{"no newline, within", strings.Repeat("a", 16), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Reads of odd sizes, so that lines straddle them.
			r := &lineReader{r: &oddReader{s: c.input}, limit: 16}
			got, err := io.ReadAll(r)
			var big *MessageTooLargeError
			switch {
			case c.ok && (err != nil || string(got) != c.input):
				t.Errorf("read %q, %v", got, err)
			case !c.ok && (!errors.As(err, &big) || big.Limit != 16):
				t.Errorf("over the limit: %v", err)
			case !c.ok && len(got) > len("ok\n")+16:
				t.Errorf("read %d bytes past the limit", len(got))
			}
		})
	}
}

// oddReader returns its text 7 bytes at a time.
type oddReader struct{ s string }

func (o *oddReader) Read(p []byte) (int, error) {
	if o.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 7)], o.s)
	o.s = o.s[n:]
	return n, nil
}
