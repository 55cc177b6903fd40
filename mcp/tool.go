package mcp

import (
	"context"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// DefaultMaxResultBytes bounds the text of one MCP result the model sees,
// as pi's 20 KB: beyond it the middle is cut out and the whole text saved
// to a file the result names.
const DefaultMaxResultBytes = 20 * 1024

// Tool is one server tool as the model sees it ([tool.Tool]).
type Tool struct {
	m      *Manager
	s      *server
	remote string
	spec   tool.Spec
	// ReadOnly is the server's readOnlyHint.
	ReadOnly bool
}

// Spec describes the tool: its mcp__server__tool name, the server's
// description and input schema as given.
func (t *Tool) Spec() tool.Spec { return t.spec }

// ReadsOnly reports the server's readOnlyHint: the tool changes nothing.
// The permission modes run such a tool as they run a read.
func (t *Tool) ReadsOnly() bool { return t.ReadOnly }

// Server is the name of the tool's server; Remote the tool's own name.
func (t *Tool) Server() string { return t.s.cfg.Name }

// Remote is the tool's name on its server.
func (t *Tool) Remote() string { return t.remote }

// Tools returns the tools of every enabled server whose tools are known
// (connected, or disconnected since: a call starts it again), in the
// configuration's order.
func (m *Manager) Tools() []tool.Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tool.Tool
	for _, s := range m.servers {
		if !s.enabled {
			continue
		}
		for _, rt := range s.tools {
			desc := rt.remote.Description
			if desc == "" {
				desc = rt.remote.Title
			}
			ro := rt.remote.Annotations != nil && rt.remote.Annotations.ReadOnlyHint
			out = append(out, &Tool{m: m, s: s, remote: rt.remote.Name, ReadOnly: ro,
				spec: tool.Spec{Name: rt.name, Description: desc, Parameters: rt.schema}})
		}
	}
	return out
}

// resultDetails is what a result carries for user interfaces.
type resultDetails struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// FullOutputPath holds the whole text when it was cut.
	FullOutputPath string `json:"fullOutputPath,omitzero"`
	TruncatedChars int    `json:"truncatedChars,omitzero"`
}

// Run calls the tool on its server, starting the server when it is not
// connected. A result the server marks as an error is an error result
// with the server's content; a call the server could not answer (it
// stopped, it took longer than the entry's timeout) is an error.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	c, err := t.m.session(ctx, t.s)
	if err != nil {
		return tool.Result{}, err
	}
	// The entry's timeout bounds the wait for the answer; each progress
	// notification the server sends for the call starts it again, as pi's.
	timeout := t.s.cfg.Timeout
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(timeout, func() { cancel(errTimeout) })
	defer timer.Stop()
	// A notification can be handled after the answer: once Run returns,
	// none reaches the caller.
	var updating sync.Mutex
	finished := false
	token, done := t.m.watchProgress(func(p *sdk.ProgressNotificationParams) {
		updating.Lock()
		defer updating.Unlock()
		if finished {
			return
		}
		timer.Reset(timeout)
		if call.Update != nil {
			call.Update(tool.Result{Content: []llm.Content{llm.Text{Text: progressText(p)}}})
		}
	})
	defer func() {
		done()
		updating.Lock()
		finished = true
		updating.Unlock()
	}()
	args := call.Args
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	params := &sdk.CallToolParams{Name: t.remote, Arguments: stdjson.RawMessage(args)}
	if t.m.opts.LogFile != "" {
		// The newest protocol asks for log messages request by request.
		params.Meta = sdk.Meta{sdk.MetaKeyLogLevel: string(logLevel)}
	}
	params.SetProgressToken(token)
	res, err := c.sess.CallTool(cctx, params)
	if err != nil {
		return tool.Result{}, t.callError(ctx, cctx, c, err)
	}
	return t.m.result(t, res)
}

// errTimeout ends a call the server took too long to answer.
var errTimeout = errors.New("the entry's timeout passed")

// progressText words a progress notification for the user: "3/10: step".
func progressText(p *sdk.ProgressNotificationParams) string {
	text := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		text += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	return "progress " + text
}

// callError words why a call got no answer.
func (t *Tool) callError(ctx, cctx context.Context, c *connection, err error) error {
	name := t.s.cfg.Name
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case context.Cause(cctx) == errTimeout:
		return fmt.Errorf("MCP server %s did not answer within %v (the entry's timeout)", name, t.s.cfg.Timeout)
	case errors.Is(err, sdk.ErrConnectionClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), broken(err):
		// Closed first: that waits for the process, so its stderr is all
		// read by the time the error quotes it, and how it ended is known.
		c.closeAfter(err)
		why := c.ending(err)
		t.m.mu.Lock()
		mine := t.s.conn == c
		if mine {
			t.s.conn, t.s.state, t.s.err = nil, StateDisconnected, withStderr(errors.New("the server "+why+" during a call"), c)
		}
		t.m.mu.Unlock()
		if mine {
			t.m.report(name, StateDisconnected, fmt.Sprintf("MCP server %s %s during a call; it is started again on the next call", name, why))
		}
		return fmt.Errorf("MCP server %s %s during the call; it is started again on the next call: %w", name, why, withStderr(err, c))
	}
	return fmt.Errorf("MCP server %s: %w", name, err)
}

// result turns a CallToolResult into what the model sees: text blocks
// joined, images as images, resources and links described, the text
// bounded.
func (m *Manager) result(t *Tool, res *sdk.CallToolResult) (tool.Result, error) {
	var text []string
	var images []llm.Content
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			text = append(text, c.Text)
		case *sdk.ImageContent:
			images = append(images, llm.Image{Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType})
		case *sdk.AudioContent:
			text = append(text, fmt.Sprintf("[audio, %s, %d bytes: not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			text = append(text, fmt.Sprintf("[resource %s: %s%s]", c.Name, c.URI, mimeNote(c.MIMEType)))
		case *sdk.EmbeddedResource:
			text = append(text, m.embedded(c.Resource))
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			text = append(text, string(b))
		}
	}
	d := resultDetails{Server: t.s.cfg.Name, Tool: t.remote}
	joined := strings.Join(text, "\n")
	joined, d.TruncatedChars, d.FullOutputPath = m.bound(joined)
	var content []llm.Content
	if joined != "" || len(images) == 0 {
		if joined == "" {
			joined = "(no output)"
		}
		content = append(content, llm.Text{Text: joined})
	}
	content = append(content, images...)
	details, err := json.Marshal(d)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: content, Details: details, IsError: res.IsError}, nil
}

func mimeNote(mime string) string {
	if mime == "" {
		return ""
	}
	return " (" + mime + ")"
}

// embedded words an embedded resource: its text, or where its bytes were
// saved.
func (m *Manager) embedded(r *sdk.ResourceContents) string {
	if r == nil {
		return "[empty resource]"
	}
	if r.Text != "" || len(r.Blob) == 0 {
		return fmt.Sprintf("[resource %s%s]\n%s", r.URI, mimeNote(r.MIMEType), r.Text)
	}
	f, err := os.CreateTemp(m.opts.TempDir, "prime-mcp-resource-*")
	if err == nil {
		_, err = f.Write(r.Blob)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Sprintf("[resource %s%s, %d bytes: could not be saved: %v]", r.URI, mimeNote(r.MIMEType), len(r.Blob), err)
	}
	return fmt.Sprintf("[resource %s%s, %d bytes, saved to %s]", r.URI, mimeNote(r.MIMEType), len(r.Blob), f.Name())
}

// bound cuts the middle out of text over the limit, saving the whole text
// to a file; it returns the text to show, how many characters were cut and
// the file.
func (m *Manager) bound(text string) (string, int, string) {
	limit := m.opts.MaxResultBytes
	if limit <= 0 {
		limit = DefaultMaxResultBytes
	}
	if len(text) <= limit {
		return text, 0, ""
	}
	head, tail := cutAt(text, limit/2, false), cutAt(text, len(text)-limit/2, true)
	cut := len([]rune(text[len(head) : len(text)-len(tail)]))
	path := ""
	note := fmt.Sprintf("\n…%d chars truncated…\n", cut)
	f, err := os.CreateTemp(m.opts.TempDir, "prime-mcp-*.txt")
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		path = f.Name()
		note = fmt.Sprintf("\n…%d chars truncated (the whole output is in %s)…\n", cut, path)
	}
	return head + note + tail, cut, path
}

// cutAt returns text up to (or, for fromEnd, from) byte i, moved to a rune
// boundary so that no character is split.
func cutAt(text string, i int, fromEnd bool) string {
	for i > 0 && i < len(text) && !isRuneStart(text[i]) {
		if fromEnd {
			i++
		} else {
			i--
		}
	}
	if fromEnd {
		return text[i:]
	}
	return text[:i]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
