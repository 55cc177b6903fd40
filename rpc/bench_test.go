package rpc_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/rpc"
	"github.com/prime-agent/prime/session"
)

// lineSignal tells of every line written, and keeps the size of the last.
type lineSignal struct {
	lines chan int
	n     int
}

func (w *lineSignal) Write(p []byte) (int, error) {
	w.n += len(p)
	if bytes.HasSuffix(p, []byte("\n")) {
		w.lines <- w.n
		w.n = 0
	}
	return len(p), nil
}

// BenchmarkCommand measures a command's round trip through the server, in
// the test process over a pipe: a small answer (get_state, whose cost is
// mostly the agent building the context to count the messages) and large
// ones (get_entries and get_tree of a 10,000-entry session).
func BenchmarkCommand(b *testing.B) {
	srv := llmtest.NewAnthropic(b)
	dir := b.TempDir()
	writeModels(b, dir, srv)
	s, err := session.Create(filepath.Join(b.TempDir(), "s.jsonl"), session.Options{CWD: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10000 {
		if _, err := s.Append(user(fmt.Sprint("message ", i))); err != nil {
			b.Fatal(err)
		}
	}
	out := &lineSignal{lines: make(chan int, 1)}
	server := rpc.New(out, rpc.Options{})
	ag := agent.New(s, agent.Config{Settings: settingsFor(b), AgentDir: dir, Getenv: func(string) string { return "" },
		Events: server.Event, Model: srv.Model().Provider + "/" + srv.Model().ID, NoContextFiles: true})
	defer ag.Close()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- server.Serve(context.Background(), ag, pr) }()
	defer func() { pw.Close(); <-done }()
	for _, typ := range []string{"get_state", "get_entries", "get_tree"} {
		b.Run(typ, func(b *testing.B) {
			line := []byte(fmt.Sprintf(`{"id":"x","type":%q}`+"\n", typ))
			size := 0
			for b.Loop() {
				if _, err := pw.Write(line); err != nil {
					b.Fatal(err)
				}
				size = <-out.lines
			}
			b.ReportMetric(float64(size), "bytes/answer")
		})
	}
}
