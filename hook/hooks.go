package hook

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// Hooks are in-process handlers, for programs that embed Prime. Every
// field is optional: a nil func means the handler is not interested in
// that event. Like [net/http/httptrace.ClientTrace], several Hooks combine
// with [Compose].
//
// Each func receives its own deep copy of the event: changing it changes
// nothing for the session, the caller or the other handlers. To change
// what happens, return a result. Results pass through the same JSON codec
// as a command hook's output, so the same rules apply to both (see the
// package documentation). A func that returns an error, panics or runs
// past its timeout is reported and its result ignored; the other handlers
// still run.
type Hooks struct {
	// Name identifies the handlers in reports. Empty means "in-process
	// hooks #N", N counting from 1 in dispatch order.
	Name string
	// Timeout bounds each call. Zero means the runner's
	// [Options.Timeout], else [DefaultTimeout]. The func's context is
	// cancelled when it expires; a func that ignores its context is
	// abandoned (left running, its result ignored).
	Timeout time.Duration

	BeforeCompact func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error)
	Compact       func(ctx context.Context, ev *CompactEvent) error
	CompactFailed func(ctx context.Context, ev *CompactFailedEvent) error
	BeforeTree    func(ctx context.Context, ev *BeforeTreeEvent) (*BeforeTreeResult, error)
	Tree          func(ctx context.Context, ev *TreeEvent) error

	// composed marks the result of Compose; parts are the Hooks it
	// combined, flattened.
	composed bool
	parts    []*Hooks
}

// Compose combines several Hooks into one that runs them in order: the
// first argument's handlers first. nil arguments are skipped, and
// composing composed Hooks flattens them.
//
// A [Runner] given composed Hooks runs and reports each part on its own,
// exactly as if they had been listed one by one. Called directly, a
// composed func folds its parts' results with the runner's rules (see the
// package documentation) and returns the folded result together with an
// error joining the parts' reports, if any. A composed Hooks must not be
// changed afterwards; compose again instead.
func Compose(hs ...*Hooks) *Hooks {
	c := &Hooks{composed: true}
	var names []string
	for _, h := range hs {
		for _, p := range h.flatten() {
			c.parts = append(c.parts, p)
			if p.Name != "" {
				names = append(names, p.Name)
			}
		}
	}
	c.Name = strings.Join(names, "+")
	parts := c.parts
	runner := func() *Runner { return New(nil, Options{Hooks: &Hooks{composed: true, parts: parts}}) }
	if c.anyPart(EventBeforeCompact) {
		c.BeforeCompact = func(ctx context.Context, ev *BeforeCompactEvent) (*BeforeCompactResult, error) {
			d, err := runner().BeforeCompact(ctx, ev)
			if err != nil {
				return nil, err
			}
			return d.result(), joinReports(d.Reports)
		}
	}
	if c.anyPart(EventBeforeTree) {
		c.BeforeTree = func(ctx context.Context, ev *BeforeTreeEvent) (*BeforeTreeResult, error) {
			d, err := runner().BeforeTree(ctx, ev)
			if err != nil {
				return nil, err
			}
			return d.result(), joinReports(d.Reports)
		}
	}
	if c.anyPart(EventCompact) {
		c.Compact = func(ctx context.Context, ev *CompactEvent) error {
			return joinReports(runner().Compact(ctx, ev))
		}
	}
	if c.anyPart(EventCompactFailed) {
		c.CompactFailed = func(ctx context.Context, ev *CompactFailedEvent) error {
			return joinReports(runner().CompactFailed(ctx, ev))
		}
	}
	if c.anyPart(EventTree) {
		c.Tree = func(ctx context.Context, ev *TreeEvent) error {
			return joinReports(runner().Tree(ctx, ev))
		}
	}
	return c
}

// flatten returns the plain Hooks h stands for.
func (h *Hooks) flatten() []*Hooks {
	switch {
	case h == nil:
		return nil
	case h.composed:
		return h.parts
	default:
		return []*Hooks{h}
	}
}

func (h *Hooks) anyPart(event string) bool {
	for _, p := range h.parts {
		if p.handles(event) {
			return true
		}
	}
	return false
}

// handles reports whether h has a func for event.
func (h *Hooks) handles(event string) bool {
	switch event {
	case EventBeforeCompact:
		return h.BeforeCompact != nil
	case EventCompact:
		return h.Compact != nil
	case EventCompactFailed:
		return h.CompactFailed != nil
	case EventBeforeTree:
		return h.BeforeTree != nil
	case EventTree:
		return h.Tree != nil
	}
	return false
}

func joinReports(rs []Report) error {
	errs := make([]error, len(rs))
	for i := range rs {
		errs[i] = rs[i]
	}
	return errors.Join(errs...)
}

// invalidResultError marks a result that was returned but is not valid.
type invalidResultError struct{ err error }

func (e *invalidResultError) Error() string { return e.err.Error() }
func (e *invalidResultError) Unwrap() error { return e.err }

// callGo runs an in-process handler under its timeout, recovering a panic.
// The handler runs on its own goroutine so that one ignoring its context
// cannot hold up the session: at the deadline it is abandoned. The report
// says what went wrong; it has no event or handler name yet.
func callGo[R any](ctx context.Context, timeout time.Duration, fn func(context.Context) (*R, error)) (*R, *Report) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		r        *R
		err      error
		panicked bool
		value    any
		stack    []byte
	}
	done := make(chan outcome, 1) // buffered: an abandoned handler never blocks
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o = outcome{panicked: true, value: p, stack: debug.Stack()}
			}
			done <- o
		}()
		o.r, o.err = fn(cctx)
	}()
	timedOut := func() *Report {
		return &Report{Kind: TimedOut, Detail: fmt.Sprintf("did not return within %v; it was abandoned, and whatever it returns later is ignored", timeout)}
	}
	select {
	case o := <-done:
		var invalid *invalidResultError
		switch {
		case o.panicked:
			return nil, &Report{Kind: Panicked, Detail: fmt.Sprintf("panicked: %v", o.value), Output: headOf(string(o.stack))}
		case o.err == nil:
			return o.r, nil
		case errors.As(o.err, &invalid):
			return nil, &Report{Kind: Invalid, Detail: invalid.Error() + "; the result was ignored"}
		case ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
			return nil, timedOut()
		default:
			return nil, &Report{Kind: Failed, Detail: "returned an error: " + o.err.Error()}
		}
	case <-cctx.Done():
		if ctx.Err() != nil {
			return nil, &Report{Kind: Failed, Detail: "cancelled: " + ctx.Err().Error()}
		}
		return nil, timedOut()
	}
}

// headOf bounds a panic's stack to its first maxReportBytes, where the
// panicking frames are.
func headOf(s string) string {
	if len(s) <= maxReportBytes {
		return s
	}
	s = s[:maxReportBytes]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		s = s[:i]
	}
	return s + "\n…"
}
