package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prime-agent/prime/tool"
)

// connection is one session with a server (and its process, for stdio).
type connection struct {
	sess   *sdk.ClientSession
	cmd    *exec.Cmd
	stderr *tail

	closeOnce sync.Once
	closeErr  error
}

// closeWait is how long closing a session may take (its stdio server
// asked to exit, then sent SIGTERM and SIGKILL) before the server's process
// group is killed.
const closeWait = 4 * terminateWait

// close ends the session: for stdio the server's input is closed, then it
// is sent SIGTERM and SIGKILL if it does not exit, and whatever is left of
// its process group (children of wrappers such as npx) is killed.
func (c *connection) close() error {
	c.closeOnce.Do(func() {
		if c.sess != nil {
			closed := make(chan error, 1)
			go func() { closed <- c.sess.Close() }()
			select {
			case c.closeErr = <-closed:
			case <-time.After(closeWait):
				// The session waits for the answers being written to the
				// server, and one that reads nothing never takes them:
				// its end fails the writes.
				c.killGroup()
				c.closeErr = <-closed
			}
		}
		c.killGroup()
	})
	return c.closeErr
}

// broken reports whether err is a server's output that broke the protocol
// (a message over the limit, output that is not JSON): its connection
// cannot go on.
func broken(err error) bool {
	var big *MessageTooLargeError
	var syntax *stdjson.SyntaxError
	return errors.As(err, &big) || errors.As(err, &syntax)
}

// closeAfter closes a connection that ended with err; a server that broke
// the protocol is killed at once rather than asked to exit (it may be
// writing still, and reads nothing).
func (c *connection) closeAfter(err error) {
	if broken(err) {
		c.killGroup()
	}
	c.close()
}

// ending words, for the user, how a connection that ended with err ended
// (the error of the session's read): "stopped (exit status 9)", "sent a
// message over the 32 MB limit and was disconnected". Call it after
// close, which waits for a stdio server's process.
func (c *connection) ending(err error) string {
	var big *MessageTooLargeError
	var syntax *stdjson.SyntaxError
	switch {
	case errors.As(err, &big):
		return fmt.Sprintf("sent a message over the %d MB limit and was disconnected", big.Limit>>20)
	case errors.As(err, &syntax):
		return fmt.Sprintf("wrote output that is not JSON-RPC (%v) and was disconnected", syntax)
	}
	if c.cmd != nil && c.cmd.ProcessState != nil {
		return "stopped (" + c.cmd.ProcessState.String() + ")"
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, sdk.ErrConnectionClosed) {
		return "stopped (" + err.Error() + ")"
	}
	return "stopped"
}

func (c *connection) instructions() string {
	if c.sess == nil {
		return ""
	}
	if r := c.sess.InitializeResult(); r != nil {
		return r.Instructions
	}
	return ""
}

// remoteTool is a server's tool and the name the model calls it by.
type remoteTool struct {
	name   string // mcp__server__tool
	remote *sdk.Tool
	schema jsontext.Value
}

// MaxToolName is the longest tool name the providers accept.
const MaxToolName = 64

// listTools lists every page of the server's tools and names them; a tool
// whose input schema cannot be used is left out, with why.
// listTools lists the server's tools: those offered, notes on those left
// out for a bad schema (skipped), and on those the entry hides.
func (c *connection) listTools(ctx context.Context, cfg Server) (tools []remoteTool, skipped, hidden []string, err error) {
	var all []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for {
		res, err := c.sess.ListTools(ctx, params)
		if err != nil {
			return nil, nil, nil, err
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	for _, t := range all {
		if note, ok := cfg.hiddenNote(t.Name); ok {
			hidden = append(hidden, note)
			continue
		}
		schema, err := inputSchema(t)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("tool %q left out: %v", t.Name, err))
			continue
		}
		tools = append(tools, remoteTool{remote: t, schema: schema})
	}
	names := ToolNames(cfg.Name, toolNamesOf(tools))
	for i := range tools {
		tools[i].name = names[i]
	}
	return tools, skipped, hidden, nil
}

func toolNamesOf(ts []remoteTool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.remote.Name
	}
	return out
}

// inputSchema returns the tool's input schema as the server gave it, after
// checking that it is an object schema Prime can check arguments against
// (a schema a provider would refuse fails the whole request, not only the
// tool).
func inputSchema(t *sdk.Tool) (jsontext.Value, error) {
	if t.InputSchema == nil {
		return nil, fmt.Errorf("it has no input schema")
	}
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("its input schema is not JSON: %w", err)
	}
	v := jsontext.Value(raw)
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(v, &top); err != nil {
		return nil, fmt.Errorf("its input schema is not an object")
	}
	if top.Type != "object" {
		return nil, fmt.Errorf("its input schema's type is %v, not \"object\"", top.Type)
	}
	if _, err := tool.Validate(tool.Spec{Name: t.Name, Parameters: v}, jsontext.Value("{}")); err != nil {
		if _, ok := err.(*tool.ValidationError); !ok {
			return nil, fmt.Errorf("its input schema is invalid: %w", err)
		}
	}
	return v, nil
}

// ToolNames returns the names the model calls a server's tools by:
// mcp__server__tool, every character other than a letter, a digit or _
// replaced by _, as pi names them. Names that then collide, and names over
// MaxToolName characters, get a short hash of the tool's own name instead
// of their end, so that every name is distinct and accepted by providers.
func ToolNames(server string, tools []string) []string {
	out := make([]string, len(tools))
	count := map[string]int{}
	for i, t := range tools {
		out[i] = "mcp__" + sanitize(server) + "__" + sanitize(t)
		count[out[i]]++
	}
	for i, t := range tools {
		if count[out[i]] > 1 || len(out[i]) > MaxToolName {
			sum := sha256.Sum256([]byte(t))
			suffix := "_" + hex.EncodeToString(sum[:])[:8]
			out[i] = out[i][:min(len(out[i]), MaxToolName-len(suffix))] + suffix
		}
	}
	return out
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return '_'
	}, s)
}
