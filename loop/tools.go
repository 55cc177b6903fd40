package loop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// The texts of the results the loop makes itself. The model reads them.
const (
	textUnknownTool = "There is no tool named %q. The tools you can call are: %s."
	textNoTools     = "There is no tool named %q: no tools are available in this conversation."
	textAborted     = "Not run: the user stopped the turn before this call started."
	textTruncated   = "Not run: your reply reached the output token limit, so the arguments of this call may be cut off. Send the call again with complete arguments."
	textPanic       = "The %s tool failed unexpectedly: %v"
)

// call is one tool call of a reply on its way to a result.
type call struct {
	call  llm.ToolCall
	tool  tool.Tool
	args  jsontext.Value
	paths []string
	// after lists the earlier calls touching one of the same files, which
	// must finish first.
	after []*call
	done  chan struct{}
	// ended is set once ToolEnd is emitted; updates after it are dropped.
	ended atomic.Bool

	result   tool.Result
	isError  bool
	ran      bool
	duration time.Duration
}

func errorResult(text string) tool.Result {
	return tool.Result{Content: []llm.Content{llm.Text{Text: text}}}
}

// execute runs the calls of a reply and returns their results in call order:
// each call is announced and prepared in order (looked up, its arguments
// repaired and validated), then, once all are prepared, the prepared ones
// run concurrently, a call waiting for the earlier calls that touch one of
// its files. Every start is so announced before any prepared call ends, as
// pi does.
func (r *run) execute(ctx context.Context, calls []llm.ToolCall) []*llm.ToolResultMessage {
	prepared := make([]*call, len(calls))
	var ready []*call
	for i, tc := range calls {
		c := &call{call: tc, done: make(chan struct{})}
		prepared[i] = c
		r.emit(ToolStart{Call: tc})
		if !r.prepare(ctx, c) {
			r.end(c)
			continue
		}
		for _, earlier := range prepared[:i] {
			if earlier.tool != nil && overlaps(earlier.paths, c.paths) {
				c.after = append(c.after, earlier)
			}
		}
		ready = append(ready, c)
	}
	var wg sync.WaitGroup
	for _, c := range ready {
		wg.Go(func() {
			defer r.end(c)
			for _, e := range c.after {
				<-e.done
			}
			if ctx.Err() != nil {
				c.result, c.isError = errorResult(textAborted), true
				return
			}
			r.invoke(ctx, c)
		})
	}
	wg.Wait()
	return r.results(prepared)
}

// prepare finds the call's tool and checks its arguments; false means the
// call ends here with an error result.
func (r *run) prepare(ctx context.Context, c *call) bool {
	if ctx.Err() != nil {
		c.result, c.isError = errorResult(textAborted), true
		return false
	}
	for _, t := range r.cfg.Tools {
		if t.Spec().Name == c.call.Name {
			c.tool = t
			break
		}
	}
	if c.tool == nil {
		c.result, c.isError = errorResult(r.unknownTool(c.call.Name)), true
		return false
	}
	args := c.call.Arguments.Value()
	if p, ok := c.tool.(tool.ArgPreparer); ok {
		args = p.PrepareArgs(args)
	}
	args, err := tool.Validate(c.tool.Spec(), args)
	if err != nil {
		c.result, c.isError, c.tool = errorResult(err.Error()), true, nil
		return false
	}
	c.args = args
	if p, ok := c.tool.(tool.PathTool); ok {
		c.paths = p.Paths(args)
	}
	return true
}

func (r *run) unknownTool(name string) string {
	if len(r.cfg.Tools) == 0 {
		return fmt.Sprintf(textNoTools, name)
	}
	names := make([]string, len(r.cfg.Tools))
	for i, t := range r.cfg.Tools {
		names[i] = t.Spec().Name
	}
	return fmt.Sprintf(textUnknownTool, name, strings.Join(names, ", "))
}

// invoke runs a prepared call, turning a panic into an error result.
func (r *run) invoke(ctx context.Context, c *call) {
	began := time.Now()
	c.ran = true
	defer func() {
		c.duration = time.Since(began)
		if v := recover(); v != nil {
			c.result, c.isError = errorResult(fmt.Sprintf(textPanic, c.call.Name, v)), true
		}
	}()
	res, err := c.tool.Run(ctx, tool.Call{ID: c.call.ID, Args: c.args, Update: func(p tool.Result) {
		if !c.ended.Load() {
			r.emit(ToolUpdate{Call: c.call, Partial: p})
		}
	}})
	switch {
	case err != nil:
		// Keep what the tool returned alongside its error (partial output).
		c.result, c.isError = errorResult(err.Error()), true
		if res.Details != nil {
			c.result.Details = res.Details
		}
	default:
		c.result, c.isError = res, res.IsError
	}
}

// end emits the call's ToolEnd and lets the calls waiting for it go on.
func (r *run) end(c *call) {
	c.result.IsError = c.isError
	r.mu.Lock()
	c.ended.Store(true)
	if r.cfg.Emit != nil {
		r.cfg.Emit(ToolEnd{Call: c.call, Result: c.result, IsError: c.isError, Ran: c.ran, Duration: c.duration})
	}
	r.mu.Unlock()
	close(c.done)
}

// refuse gives every call of a reply cut by the output limit an error result
// without running it.
func (r *run) refuse(calls []llm.ToolCall) []*llm.ToolResultMessage {
	out := make([]*call, len(calls))
	for i, tc := range calls {
		c := &call{call: tc, done: make(chan struct{}), result: errorResult(textTruncated), isError: true}
		out[i] = c
		r.emit(ToolStart{Call: tc})
		r.end(c)
	}
	return r.results(out)
}

// results makes the tool result messages, in call order, and emits them.
func (r *run) results(calls []*call) []*llm.ToolResultMessage {
	msgs := make([]*llm.ToolResultMessage, len(calls))
	for i, c := range calls {
		content := validText(c.result.Content)
		m := &llm.ToolResultMessage{
			ToolCallID: c.call.ID, ToolName: c.call.Name, Content: content,
			Details: c.result.Details, IsError: c.isError, Timestamp: r.now().UnixMilli(),
		}
		if c.ran {
			m.DurationMs = max(1, c.duration.Milliseconds())
		}
		msgs[i] = m
		r.deliver([]llm.Message{m})
	}
	return msgs
}

// validText returns content with any invalid UTF-8 in its texts replaced
// (a command's output may hold any bytes; the session stores JSON text).
func validText(content []llm.Content) []llm.Content {
	out := make([]llm.Content, len(content))
	for i, c := range content {
		if t, ok := c.(llm.Text); ok && !utf8.ValidString(t.Text) {
			t.Text = strings.ToValidUTF8(t.Text, "\uFFFD")
			c = t
		}
		out[i] = c
	}
	return out
}

// overlaps reports whether two lists of paths share one.
func overlaps(a, b []string) bool {
	for _, p := range a {
		if slices.Contains(b, p) {
			return true
		}
	}
	return false
}
