package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/internal/npmtest"
	"github.com/prime-agent/prime/llm"
)

// npmServer returns the command of a real server from npm (installed
// once by npmtest; the test is skipped when npm cannot install it).
func npmServer(t *testing.T, bin string) string { return npmtest.Bin(t, bin) }

func TestEverythingServer(t *testing.T) {
	cmd := npmServer(t, "mcp-server-everything")
	m, rep := startManager(t, Server{Name: "everything", Transport: TransportStdio, Command: cmd, Enabled: true, Timeout: DefaultTimeout})
	st := m.Status()[0]
	if st.State != StateConnected || len(st.Tools) < 10 || len(st.Skipped) != 0 {
		t.Fatalf("%s: %s, %d tools, skipped %v (%s)", st.State, st.Error, len(st.Tools), st.Skipped, rep.text())
	}
	sum := findTool(t, m, "mcp__everything__get_sum")
	if !strings.Contains(string(sum.Spec().Parameters), `"a"`) {
		t.Errorf("get_sum's schema: %s", sum.Spec().Parameters)
	}
	for _, tc := range []struct {
		tool, args string
		isError    bool
		text       string // contained in the result's text
		images     int
	}{
		{"echo", `{"message":"hello MCP"}`, false, "hello MCP", 0},
		{"get_sum", `{"a":2,"b":3}`, false, "5", 0},
		{"get_sum", `{"a":"two"}`, true, "", 0},
		{"get_tiny_image", `{}`, false, "", 1},
		{"get_resource_reference", `{"resourceType":"Text","resourceId":1}`, false, "[resource ", 0},
		{"get_resource_links", `{"count":2}`, false, "[resource ", 0},
		{"trigger_long_running_operation", `{"duration":1,"steps":2}`, false, "completed", 0},
	} {
		res, err := call(t, findTool(t, m, "mcp__everything__"+tc.tool), tc.args)
		if err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		text := llm.TextOf(res.Content)
		images := 0
		for _, c := range res.Content {
			if img, ok := c.(llm.Image); ok && img.MIMEType == "image/png" && img.Data != "" {
				images++
			}
		}
		if res.IsError != tc.isError || !strings.Contains(text, tc.text) || images != tc.images {
			t.Errorf("%s %s: error %v, %d images, text %q", tc.tool, tc.args, res.IsError, images, text)
		}
	}
}

func TestFilesystemServer(t *testing.T) {
	cmd := npmServer(t, "mcp-server-filesystem")
	root, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "notes.txt"), "first line\nsecond line\n")
	write(t, filepath.Join(outside, "secret.txt"), "no")
	m, rep := startManager(t, Server{Name: "fs", Transport: TransportStdio, Command: cmd, Args: []string{root}, Enabled: true, Timeout: DefaultTimeout})
	if st := m.Status()[0]; st.State != StateConnected {
		t.Fatalf("%s: %s (%s)", st.State, st.Error, rep.text())
	}
	res, err := call(t, findTool(t, m, "mcp__fs__read_text_file"), `{"path":"`+filepath.Join(root, "notes.txt")+`"}`)
	if err != nil || res.IsError || llm.TextOf(res.Content) != "first line\nsecond line\n" {
		t.Errorf("read: %+v %v", res, err)
	}
	res, err = call(t, findTool(t, m, "mcp__fs__write_file"), `{"path":"`+filepath.Join(root, "new.txt")+`","content":"made by MCP"}`)
	if err != nil || res.IsError {
		t.Errorf("write: %+v %v", res, err)
	}
	if data, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || string(data) != "made by MCP" {
		t.Errorf("written file: %q %v", data, err)
	}
	res, err = call(t, findTool(t, m, "mcp__fs__read_text_file"), `{"path":"`+filepath.Join(outside, "secret.txt")+`"}`)
	if err != nil || !res.IsError || !strings.Contains(llm.TextOf(res.Content), "denied") {
		t.Errorf("read outside the root: %+v %v", res, err)
	}
}
