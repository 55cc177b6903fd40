package mcp

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/tool"
)

// BenchmarkCall measures one tool call's round trip to a stdio server (a
// Go SDK server in another process), result conversion included.
func BenchmarkCall(b *testing.B) {
	exe := selfServer(b, "faults", "tools")
	m := NewManager([]Server{exe}, Options{TempDir: b.TempDir()})
	defer m.Close()
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	var echo tool.Tool
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "mcp__faults__echo" {
			echo = tl
		}
	}
	if echo == nil {
		b.Fatalf("no echo tool: %+v", m.Status())
	}
	call := tool.Call{Args: jsontext.Value(`{"text":"hello"}`)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := echo.Run(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart measures starting a stdio server until its tools are
// listed.
func BenchmarkStart(b *testing.B) {
	exe := selfServer(b, "faults", "tools")
	for b.Loop() {
		m := NewManager([]Server{exe}, Options{})
		m.Start()
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		if len(m.Tools()) == 0 {
			b.Fatal("no tools")
		}
		m.Close()
	}
}
