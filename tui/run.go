package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
)

// Options configure the terminal UI.
type Options struct {
	// Version is shown in the header.
	Version string
	// CWD is the conversation's directory (the footer, @ completion,
	// /export); Home is shown as ~.
	CWD, Home string
	// Prompts are sent as soon as the UI is up ("prime MESSAGE..."): the
	// first as a prompt, the others as follow-ups.
	Prompts []string
	// Input and Output are the terminal; nil means standard input and
	// output.
	Input  io.Reader
	Output io.Writer
	// Now is the clock (elapsed times, double presses); nil means time.Now.
	Now func() time.Time
	// Sandboxed says the bash tool's commands run in the OS sandbox
	// (--permission-mode sandbox): the footer shows it.
	Sandboxed bool
}

// Events carries the agent's events to the UI. Its Send is the agent's
// Config.Events: it never blocks (the agent calls it on its own goroutines,
// and on the UI's when an agent method the UI calls emits one), so events
// wait in a queue that a goroutine of Events hands to the program in order.
type Events struct {
	mu     sync.Mutex
	queue  []agent.Event
	wake   chan struct{}
	closed bool
}

// NewEvents returns an Events with nothing to deliver to yet: events are
// kept until Attach.
func NewEvents() *Events {
	return &Events{wake: make(chan struct{}, 1)}
}

// Send queues an event for the UI.
func (e *Events) Send(ev agent.Event) {
	e.mu.Lock()
	if !e.closed {
		e.queue = append(e.queue, ev)
	}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Attach delivers the queued events, and those to come, to p as eventsMsg
// batches until ctx is done or the program ends (p.Send returns once it
// has). It returns when it stops; run it on a goroutine.
func (e *Events) Attach(ctx context.Context, send func(tea.Msg)) {
	for {
		e.mu.Lock()
		batch := e.queue
		e.queue = nil
		e.mu.Unlock()
		if len(batch) > 0 {
			send(eventsMsg(batch))
		}
		select {
		case <-ctx.Done():
			e.mu.Lock()
			e.closed = true
			e.mu.Unlock()
			return
		case <-e.wake:
		}
	}
}

// Run shows the UI for ag until the user quits or ctx is cancelled; ev must
// be the Events the agent was made with (Config.Events: ev.Send). A run the
// agent is in the middle of is aborted before Run returns.
func Run(ctx context.Context, ag *agent.Agent, ev *Events, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(ctx, ag, opts)
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	out := opts.Output
	if out == nil {
		out = os.Stdout
	}
	if f, ok := out.(*os.File); ok {
		out = syncOutput{f}
	}
	m.drawn = newDrawClock(out)
	popts = append(popts, tea.WithOutput(m.drawn.output()))
	p := tea.NewProgram(m, popts...)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ev.Attach(ctx, p.Send)
	}()
	_, err := p.Run()
	cancel()
	wg.Wait()
	ag.Abort()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}
