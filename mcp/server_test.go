package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as the MCP servers of the fault tests: run with
// envServer set, it serves MCP over stdio (a real process, so that a crash
// is a real crash) instead of running the tests.
const (
	envServer  = "PRIME_MCP_TEST_SERVER"  // "tools", "noinit" or "exit"
	envPIDFile = "PRIME_MCP_TEST_PIDFILE" // where "tools" writes its pid and its child's
)

func TestMain(m *testing.M) {
	switch os.Getenv(envServer) {
	case "":
		os.Exit(m.Run())
	case "tools":
		serveTools()
	case "noinit":
		// Reads requests and never answers, not even initialize, and
		// stays when its input closes.
		if f := os.Getenv(envPIDFile); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	case "hostile":
		serveHostile(os.Getenv(envHostile))
	case "exit":
		fmt.Fprintln(os.Stderr, "boom: the server's configuration is missing")
		os.Exit(3)
	}
	os.Exit(0)
}

// serveTools serves the tools the fault tests call.
func serveTools() {
	if f := os.Getenv(envPIDFile); f != "" {
		// A child in the server's process group, as npx leaves one.
		child := exec.Command("sleep", "1000")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		data := strconv.Itoa(os.Getpid()) + " " + strconv.Itoa(child.Process.Pid) + "\n"
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			os.Exit(1)
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "faults", Version: "1"}, &sdk.ServerOptions{Instructions: "Tools for fault tests."})
	obj := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes text.", InputSchema: obj}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + string(r.Params.Arguments)}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "pid", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "crash", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "panic: the crash tool crashes")
		os.Exit(7)
		return nil, nil
	})
	s.AddTool(&sdk.Tool{Name: "fail", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such record"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "picture", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a picture:"},
			&sdk.ImageContent{Data: []byte("\x89PNG fake"), MIMEType: "image/png"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "big", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "START" + strings.Repeat("é", 30000) + "END"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "hang", InputSchema: obj}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	s.AddTool(&sdk.Tool{Name: "progress", InputSchema: obj}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// Longer in all than the test's timeout, with progress well within it.
		const steps = 15
		for i := 1; i <= steps; i++ {
			time.Sleep(200 * time.Millisecond)
			if err := r.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: r.Params.GetProgressToken(),
				Progress: float64(i), Total: steps, Message: "step"}); err != nil {
				return nil, err
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "log", InputSchema: obj}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		_ = r.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "debug", Logger: "faults", Data: "too fine to keep"})
		_ = r.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "faults", Data: "disk almost\nfull"})
		_ = r.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "error", Logger: "db", Data: map[string]any{"code": 7}})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "logged"}}}, nil
	})
	bad := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "nmber"}}}
	s.AddTool(&sdk.Tool{Name: "badschema", InputSchema: bad}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// selfServer is a stdio entry running this test binary as a server.
func selfServer(t testing.TB, name, mode string, env ...string) Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Server{Name: name, Transport: TransportStdio, Command: exe, Enabled: true, Timeout: DefaultTimeout,
		Env: append([]string{envServer + "=" + mode}, env...)}
}
