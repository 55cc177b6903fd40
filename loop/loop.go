package loop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/tool"
)

// Config is what a run needs from its caller.
type Config struct {
	// Tools are the tools the model may call. A call naming another tool
	// gets an error result.
	Tools []tool.Tool
	// Request returns what to send for the next reply, built from the
	// conversation as the caller's store now holds it. It is called before
	// every request; an error ends the run with a failed reply that carries
	// it (see Run).
	Request func(ctx context.Context) (Request, error)
	// Emit is told every event, in order, one at a time (see the package
	// documentation). A MessageEnd is the moment to store the message.
	Emit func(Event)
	// Queue holds the messages the user queued while the run goes on; nil
	// for none.
	Queue Queue
	// BetweenTurns, when set, runs after a turn when the run will go on and
	// before the next TurnStart: the caller's point to compact the
	// conversation, to change the model, or to return messages (a system
	// prompt patch) to send before the next request. It runs while ctx may
	// be cancelled; the loop checks ctx afterwards.
	BetweenTurns func(ctx context.Context, last Turn) []llm.Message
	// Now is the clock for the timestamps of the messages the loop makes;
	// nil means time.Now.
	Now func() time.Time
	// MaxTurns stops the run once it has had this many turns (RunEnd says
	// so); 0 means no limit.
	MaxTurns int
	// ErrorBackoff is the wait before the next request once BackoffAfter
	// turns in a row had only failed tool calls (an unknown tool, bad
	// arguments, a tool that failed); it doubles with each further such
	// turn, up to MaxErrorBackoff, and after StopAfterErrors such turns
	// the run stops. 0 means one second.
	ErrorBackoff time.Duration
}

// The bounds on a model that keeps making failing tool calls.
const (
	// BackoffAfter failing turns in a row, the loop waits before the next
	// request.
	BackoffAfter = 3
	// StopAfterErrors failing turns in a row stop the run.
	StopAfterErrors = 10
	// MaxErrorBackoff is the longest wait between two failing turns.
	MaxErrorBackoff = 30 * time.Second
)

// Request is one model call: the provider and what to ask it.
type Request struct {
	Provider llm.Provider
	Request  *llm.Request
}

// Kind says which of the two queues a message waits in.
type Kind int

const (
	// Steering messages adjust the work under way: they are delivered after
	// the current turn, before the next request.
	Steering Kind = iota
	// FollowUp messages are for after the work: delivered only when the run
	// would otherwise end.
	FollowUp
)

// Queue is where the loop finds the messages queued during a run. The loop
// takes messages only when it delivers them, so what it has not taken when
// a run ends (an abort) stays queued.
type Queue interface {
	// Waiting reports whether a message of kind k is queued.
	Waiting(k Kind) bool
	// Take removes and returns the messages of kind k to deliver now (one,
	// or all of them, as the queue's mode says); nil when none is queued.
	Take(k Kind) []llm.Message
}

// Turn is one finished turn: the reply and the results of its tool calls.
type Turn struct {
	Message     *llm.AssistantMessage
	ToolResults []*llm.ToolResultMessage
}

// Run runs the conversation from the starting messages (a user prompt, with a
// system prompt patch before it; none to retry from what the store holds)
// until it settles, and returns every message the run produced, starting
// messages first. Run returns when the run has ended and every tool it started
// has stopped.
//
// When Config.Request fails, the reply is an assistant message with stop
// reason error (aborted, if ctx was cancelled) carrying the error's text, and
// the run ends as after any failed reply.
func Run(ctx context.Context, cfg *Config, start []llm.Message) []llm.Message {
	r := &run{cfg: cfg, now: cfg.Now}
	if r.now == nil {
		r.now = time.Now
	}
	r.emit(RunStart{})
	r.emit(TurnStart{})
	r.deliver(start)
	r.deliver(r.take(Steering))
	for {
		r.turns++
		msg, _ := r.reply(ctx)
		if msg.StopReason == llm.StopReasonError || msg.StopReason == llm.StopReasonAborted {
			r.emit(TurnEnd{Message: msg})
			break
		}
		last := Turn{Message: msg}
		if calls := msg.ToolCalls(); len(calls) > 0 {
			if msg.StopReason == llm.StopReasonLength {
				last.ToolResults = r.refuse(calls)
			} else {
				last.ToolResults = r.execute(ctx, calls)
			}
		}
		r.emit(TurnEnd{Message: msg, ToolResults: last.ToolResults})
		if !r.next(ctx, last) {
			break
		}
	}
	r.emit(RunEnd{Messages: r.out, Stopped: r.stopped, Turns: r.turns})
	return r.out
}

// run is one call of Run.
type run struct {
	cfg *Config
	now func() time.Time
	// mu serialises Emit and guards out.
	mu  sync.Mutex
	out []llm.Message
	// turns counts the turns so far, failing the turns in a row whose
	// tool calls all failed; stopped says why the run stopped early.
	turns, failing int
	stopped        Stopped
}

func (r *run) emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cfg.Emit != nil {
		r.cfg.Emit(e)
	}
}

// deliver emits messages that go to the model as they are (starting,
// steering, follow-up and prepared messages) and records them.
func (r *run) deliver(msgs []llm.Message) {
	for _, m := range msgs {
		r.emit(MessageStart{Message: m})
		r.emit(MessageEnd{Message: m})
		r.mu.Lock()
		r.out = append(r.out, m)
		r.mu.Unlock()
	}
}

func (r *run) record(m llm.Message) {
	r.mu.Lock()
	r.out = append(r.out, m)
	r.mu.Unlock()
}

func (r *run) waiting(k Kind) bool { return r.cfg.Queue != nil && r.cfg.Queue.Waiting(k) }

func (r *run) take(k Kind) []llm.Message {
	if r.cfg.Queue == nil {
		return nil
	}
	return r.cfg.Queue.Take(k)
}

// next prepares the turn after last and reports whether there is one: the
// run goes on after tool results or when steering waits, and otherwise when
// follow-ups wait. Messages are taken from the queue only once the caller's
// between-turn work is done and the run is still not cancelled.
func (r *run) next(ctx context.Context, last Turn) bool {
	tools := len(last.ToolResults) > 0
	if tools && !r.bounded(ctx, last) {
		return false
	}
	for {
		if ctx.Err() != nil {
			return false
		}
		if !tools && !r.waiting(Steering) && !r.waiting(FollowUp) {
			return false
		}
		var prepared []llm.Message
		if r.cfg.BetweenTurns != nil {
			prepared = r.cfg.BetweenTurns(ctx, last)
			if ctx.Err() != nil {
				return false
			}
		}
		queued := r.take(Steering)
		if !tools && len(queued) == 0 {
			queued = r.take(FollowUp)
		}
		if !tools && len(queued) == 0 {
			// The queue was cleared meanwhile: look again.
			continue
		}
		r.emit(TurnStart{})
		r.deliver(prepared)
		r.deliver(queued)
		return true
	}
}

// bounded applies the run's bounds before a turn that answers tool
// results: the turn limit, and the back-off from (and the stop after) turns
// whose tool calls all failed. It reports whether the run may go on.
func (r *run) bounded(ctx context.Context, last Turn) bool {
	if r.cfg.MaxTurns > 0 && r.turns >= r.cfg.MaxTurns {
		r.stopped = StoppedTurns
		return false
	}
	failed := true
	for _, res := range last.ToolResults {
		failed = failed && res.IsError
	}
	if !failed {
		r.failing = 0
		return true
	}
	r.failing++
	if r.failing >= StopAfterErrors {
		r.stopped = StoppedToolErrors
		return false
	}
	if r.failing < BackoffAfter {
		return true
	}
	delay := r.cfg.ErrorBackoff
	if delay <= 0 {
		delay = time.Second
	}
	for range r.failing - BackoffAfter {
		if delay *= 2; delay >= MaxErrorBackoff {
			delay = MaxErrorBackoff
			break
		}
	}
	r.emit(Backoff{Failures: r.failing, Delay: delay})
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// reply streams one assistant reply and returns it with the stream's error
// (nil unless it failed or was aborted).
func (r *run) reply(ctx context.Context) (*llm.AssistantMessage, error) {
	req, err := r.cfg.Request(ctx)
	if err == nil && (req.Provider == nil || req.Request == nil) {
		err = errors.New("Config.Request returned no provider or request")
	}
	if err != nil {
		msg := &llm.AssistantMessage{Content: []llm.Content{}, StopReason: llm.StopReasonError, ErrorMessage: err.Error(), Timestamp: r.now().UnixMilli()}
		if req.Request != nil {
			m := req.Request.Model
			msg.API, msg.Provider, msg.Model = m.API, m.Provider, m.ID
		}
		if ctx.Err() != nil {
			msg.StopReason = llm.StopReasonAborted
		}
		r.emit(MessageStart{Message: msg})
		r.emit(MessageEnd{Message: msg, Err: err})
		r.record(msg)
		return msg, err
	}
	began := time.Now()
	var final *llm.AssistantMessage
	var ferr error
	started := false
	for ev := range req.Provider.Stream(ctx, req.Request) {
		switch ev.Type {
		case llm.EventStart:
			if !started {
				started = true
				r.emit(MessageStart{Message: ev.Message})
			}
		case llm.EventDone, llm.EventError:
			final, ferr = ev.Message, ev.Err
		default:
			if !started {
				started = true
				r.emit(MessageStart{Message: &llm.AssistantMessage{Content: []llm.Content{}}})
			}
			r.emit(MessageUpdate{Event: ev})
		}
	}
	if final == nil {
		m := req.Request.Model
		ferr = fmt.Errorf("%w: the stream ended without a final message", llm.ErrBadResponse)
		final = &llm.AssistantMessage{Content: []llm.Content{}, API: m.API, Provider: m.Provider, Model: m.ID,
			StopReason: llm.StopReasonError, ErrorMessage: ferr.Error(), Timestamp: r.now().UnixMilli()}
	}
	if ferr == nil && (final.StopReason == llm.StopReasonError || final.StopReason == llm.StopReasonAborted) {
		ferr = errors.New(final.ErrorMessage)
	}
	final.DurationMs = time.Since(began).Milliseconds()
	final.ThinkingLevel = req.Request.Reasoning
	if final.ThinkingLevel == "" {
		final.ThinkingLevel = llm.ThinkingOff
	}
	if !started {
		r.emit(MessageStart{Message: final})
	}
	r.emit(MessageEnd{Message: final, Err: ferr})
	r.record(final)
	return final, ferr
}
