package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/loop"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/tool"
)

// conversation is the state of the agent's conversation with its model,
// guarded by Agent.mu.
type conversation struct {
	// model is the model in use and provider its client, both set once the
	// model is chosen (ensureModel).
	model    *llm.Model
	provider llm.Provider
	thinking llm.ThinkingLevel
	// local are the models found on local servers.
	local  []llm.Model
	tools  []tool.Tool
	prompt *promptSpec
	// setUp is set once the session holds the conversation's first
	// model_change and thinking_level_change (or already had them).
	setUp bool

	steering, followUp queue
	// autoCompact and autoRetry start as the settings say; the front ends
	// may turn them off for the session.
	autoCompact, autoRetry bool
	flagsSet               bool

	// phase is what the agent is doing (runstate.go): busy from the moment
	// a prompt is accepted until the agent settles, and for a manual
	// compaction or a navigation; idle is closed when that ends.
	phase runPhase
	idle  chan struct{}
	// settling is closed once the last prompt's AgentSettled was emitted
	// (nil before any): what begins after it waits for it, so that no event
	// of a new run or operation comes before it.
	settling chan struct{}
	// visible is set once the model began its first reply to the current
	// prompt (and for a manual operation). A prompt arriving before that
	// arrived together with the one being started (pi loses such a
	// prompt): it is queued as a follow-up rather than refused.
	visible bool
	// reply is the metadata of the reply being streamed, as it began.
	reply *llm.AssistantMessage
	// storeFailed is set once a message of the current work could not be
	// written: the run stops, and the messages that end it (the aborted
	// reply) fail the same way without saying it again.
	storeFailed bool
	// writeFailure is the first message that could not be written since
	// the agent was made, and the tool calls whose results were lost.
	writeFailure *WriteFailure
	// cancel stops what the agent is doing (the run, its retries and
	// compactions, or a manual operation).
	cancel context.CancelFunc

	// retries counts the automatic retries of the current failure; retry
	// says one was decided at the end of the last run.
	retries int
	retry   bool
	// retryCancel cancels the wait before a retry (AbortRetry).
	retryCancel context.CancelFunc
	// recovered is set once an overflow (or cut-off reply) recovery was
	// tried since the last user message or successful reply: pi's one-shot
	// flag, so the agent never loops on recovery.
	recovered bool
	// lastErr is the classified error of the last failed reply.
	lastErr error

	// bashCancel stops the user's command (RunBash); heldBash are the
	// commands that finished while a run went on, recorded when it ends.
	bashCancel context.CancelFunc
	heldBash   []*session.BashExecution

	// background is the summary written in the background, if any
	// (background.go).
	background *backgroundJob
}

// Disposition says what became of a prompt.
type Disposition string

// Dispositions.
const (
	// Started: a run began with the prompt.
	Started Disposition = "started"
	// Queued: the agent was busy; the prompt waits in a queue.
	Queued Disposition = "queued"
)

// Behavior says what to do with a prompt that arrives while the agent is
// busy.
type Behavior string

// Behaviors.
const (
	// Steer queues it to be delivered after the current turn.
	Steer Behavior = "steer"
	// FollowUp queues it to be delivered when the agent would stop.
	FollowUp Behavior = "followUp"
)

// PromptOptions are the optional parts of a prompt.
type PromptOptions struct {
	// Images are sent with the text.
	Images []llm.Image
	// Behavior says what to do when the agent is busy; empty means refuse
	// with ErrBusy — unless the model has not begun to answer the prompt
	// being started, when the prompt is queued as a follow-up: two prompts
	// sent together are never lost.
	Behavior Behavior
	// Accepted, when set, is called with the disposition before any event
	// of the run the prompt starts: the moment to acknowledge it.
	Accepted func(Disposition)
}

// Errors of the conversation.
var (
	// ErrBusy means a prompt arrived while the agent was working and said
	// neither steer nor followUp.
	ErrBusy = errors.New("the agent is busy: send the message as a steer or a follow-up, or abort first")
	// ErrCompacting means a prompt arrived during a manual compaction or
	// a navigation.
	ErrCompacting = errors.New("a compaction or navigation is in progress; wait for it to end or abort it")
	// ErrEmptyPrompt means a prompt had neither text nor images.
	ErrEmptyPrompt = errors.New("nothing to send: the message is empty")
)

// Prompt sends text to the model. When the agent is idle a run starts on a
// goroutine of the agent's and Prompt returns at once (Started); the run's
// events follow, ending with AgentSettled. When the agent is busy the text is
// queued as opts.Behavior says (Queued), or refused with ErrBusy. A model
// that cannot be used is an error here, before anything is written.
//
// An @path in the text naming an image file (PNG, JPEG, GIF, WebP; relative
// to the conversation's directory, quoted when it has spaces) attaches the
// image, in any front end; images for a model that takes text only are
// refused with ErrNoImageInput.
func (a *Agent) Prompt(ctx context.Context, text string, opts PromptOptions) (Disposition, error) {
	if strings.TrimSpace(text) == "" && len(opts.Images) == 0 {
		return "", ErrEmptyPrompt
	}
	text, err := a.expandCommand(text)
	if err != nil {
		return "", err
	}
	if err := a.ensureModel(ctx); err != nil {
		return "", err
	}
	refs, err := a.imageRefs(text)
	if err != nil {
		return "", err
	}
	if len(refs) > 0 {
		opts.Images = append(append([]llm.Image(nil), opts.Images...), refs...)
	}
	if err := a.checkImages(opts.Images); err != nil {
		return "", err
	}
	a.mu.Lock()
	c := &a.conv
	if c.phase.busy() {
		if c.phase.manual() {
			a.mu.Unlock()
			return "", ErrCompacting
		}
		kind := opts.Behavior
		if kind == "" && !c.visible {
			kind = FollowUp
		}
		if kind == "" {
			a.mu.Unlock()
			return "", ErrBusy
		}
		a.enqueueLocked(kind, text, opts.Images)
		update := a.queueUpdateLocked()
		a.mu.Unlock()
		if opts.Accepted != nil {
			opts.Accepted(Queued)
		}
		a.emit(update)
		return Queued, nil
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a.beginLocked(cancel, evPrompt)
	msg := a.userMessageLocked(text, opts.Images)
	a.mu.Unlock()
	if opts.Accepted != nil {
		opts.Accepted(Started)
	}
	go a.drive(ctx, msg)
	return Started, nil
}

// Steer queues text to be delivered after the current turn; when the agent
// is idle it is a prompt.
func (a *Agent) Steer(ctx context.Context, text string, images ...llm.Image) (Disposition, error) {
	return a.Prompt(ctx, text, PromptOptions{Images: images, Behavior: Steer})
}

// FollowUp queues text to be delivered when the agent would stop; when the
// agent is idle it is a prompt.
func (a *Agent) FollowUp(ctx context.Context, text string, images ...llm.Image) (Disposition, error) {
	return a.Prompt(ctx, text, PromptOptions{Images: images, Behavior: FollowUp})
}

// beginLocked makes the idle agent busy (ev: evPrompt, evManual or
// evManualSummary) with cancel as the way to stop it; false, and nothing
// changed, when it is busy already.
func (a *Agent) beginLocked(cancel context.CancelFunc, ev runEvent) bool {
	c := &a.conv
	if !c.move(ev) {
		return false
	}
	c.visible, c.cancel = ev != evPrompt, cancel
	c.storeFailed = false
	c.idle = make(chan struct{})
	return true
}

// endLocked marks the agent idle and returns the function that lets its
// waiters go, to be called once the last event of the work is out (so Wait
// returns after AgentSettled has been told, while a prompt sent on seeing
// it already finds the agent idle).
func (a *Agent) endLocked() (release func()) {
	c := &a.conv
	if c.cancel != nil {
		c.cancel()
	}
	c.move(evEnd)
	c.cancel = nil
	idle := c.idle
	return func() {
		if idle != nil {
			close(idle)
		}
	}
}

// Busy reports whether the agent is working: a run with its retries and
// compactions, a manual compaction or a navigation.
func (a *Agent) Busy() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conv.phase.busy()
}

// Wait blocks until the agent is idle or ctx is done.
func (a *Agent) Wait(ctx context.Context) error {
	a.mu.Lock()
	idle := a.conv.idle
	busy := a.conv.phase.busy()
	a.mu.Unlock()
	if !busy || idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Abort stops what the agent is doing — the reply being streamed, the tools
// running, a retry's wait, a compaction or a branch summary — and waits until
// it is idle. What was already written stays; every tool call that was
// started gets a result. Queued messages stay queued.
func (a *Agent) Abort() {
	defer a.cancelBackground() // once the run is idle: events stay in order
	a.mu.Lock()
	cancel, idle, busy := a.conv.cancel, a.conv.idle, a.conv.phase.busy()
	a.mu.Unlock()
	if !busy {
		return
	}
	if cancel != nil {
		cancel()
	}
	<-idle
}

// userMessageLocked makes the user message of a prompt.
func (a *Agent) userMessageLocked(text string, images []llm.Image) *llm.UserMessage {
	content := []llm.Content{llm.Text{Text: text}}
	for _, img := range images {
		content = append(content, img)
	}
	return &llm.UserMessage{Content: content, Timestamp: a.now().UnixMilli()}
}

func (a *Agent) now() time.Time {
	if a.cfg.Now != nil {
		return a.cfg.Now()
	}
	return time.Now()
}

// drive runs a prompt to its settlement: the compaction check before it, the
// run, then the automatic retries, recoveries, compactions and queued
// messages that follow, as pi 1.6's agent session does.
func (a *Agent) drive(ctx context.Context, prompt *llm.UserMessage) {
	aborted := false
	a.afterSettled()
	defer func() {
		a.reportBackground()
		a.flushHeldBash()
		a.mu.Lock()
		a.conv.retries, a.conv.retry = 0, false
		// What begins from now on waits until AgentSettled has been told
		// (afterSettled): release closes the run's idle channel after it.
		a.conv.settling = a.conv.idle
		release := a.endLocked()
		a.mu.Unlock()
		a.emit(AgentSettled{Aborted: aborted})
		release()
	}()
	if err := a.setUpSession(); err != nil {
		a.notice(NoticeError, err.Error())
	}
	a.flushHeldBash()
	// Before the prompt: a context already over the threshold (or a reply
	// that overflowed) is compacted first. A retry it would schedule is
	// dropped: the new prompt is what goes next.
	a.reloadSettings(ctx)
	a.refreshTools()
	a.checkCompaction(ctx, siteBeforePrompt, a.lastAssistant())
	start := []llm.Message{}
	if patch := a.systemPatch(); patch != nil {
		start = append(start, patch)
	}
	start = append(start, prompt)
	if ctx.Err() != nil {
		// Aborted before the run began (a compact or an abort right after
		// the prompt was accepted): the prompt is kept all the same, so
		// what the user asked is never lost.
		a.keep(ctx, start)
		aborted = true
		return
	}
	a.mu.Lock()
	a.conv.recovered = false
	a.mu.Unlock()
	msgs := a.run(ctx, start)
	for {
		if ctx.Err() != nil {
			aborted = true
			return
		}
		a.mu.Lock()
		retry := a.conv.retry
		a.conv.retry = false
		a.mu.Unlock()
		if retry {
			if !a.retryWait(ctx, lastAssistantOf(msgs)) {
				aborted = ctx.Err() != nil
				return
			}
			msgs = a.run(ctx, nil)
			continue
		}
		a.endRetries(lastAssistantOf(msgs))
		if a.checkCompaction(ctx, siteAfterRun, a.lastAssistant()) {
			msgs = a.run(ctx, nil)
			continue
		}
		if ctx.Err() != nil {
			aborted = true
			return
		}
		if next := a.takeQueued(); len(next) > 0 {
			msgs = a.run(ctx, next)
			continue
		}
		return
	}
}

// keep stores messages no run will send, telling the front ends of each as
// the loop would.
func (a *Agent) keep(ctx context.Context, msgs []llm.Message) {
	for _, m := range msgs {
		a.emit(MessageStart{Message: m})
		a.emit(MessageEnd{Message: m, Entry: a.store(ctx, m)})
	}
}

// run runs the loop once from start (nil: retry from what the session
// holds) and returns the run's messages.
func (a *Agent) run(ctx context.Context, start []llm.Message) []llm.Message {
	a.mu.Lock()
	tools := a.conv.tools
	a.mu.Unlock()
	cfg := &loop.Config{
		Tools:        a.gate(tools),
		Request:      a.request,
		Emit:         func(e loop.Event) { a.onLoopEvent(ctx, e) },
		Queue:        (*agentQueue)(a),
		BetweenTurns: a.betweenTurns,
		Now:          a.now,
		MaxTurns:     a.settings().Conversation().MaxTurns,
		ErrorBackoff: a.cfg.ToolErrorBackoff,
	}
	return loop.Run(ctx, cfg, start)
}

// request builds the next request from the session's current path: its
// context (compacted, failed attempts hidden), the system prompt and tools
// its system messages give, the model and thinking level in force.
func (a *Agent) request(ctx context.Context) (loop.Request, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &a.conv
	if c.model == nil || c.provider == nil {
		return loop.Request{}, errors.New("no model is selected")
	}
	sctx, err := a.s.Context("")
	if err != nil {
		return loop.Request{}, fmt.Errorf("reading the conversation from the session: %w", err)
	}
	req := &llm.Request{
		Model:     *c.model,
		Messages:  session.ToLLM(sctx.Messages),
		Reasoning: c.thinking,
	}
	if sys := sctx.System(); sys != nil {
		req.SystemPrompt = sys.Prompt()
	}
	req.Tools = sctx.Tools()
	if h := a.s.Header(); h != nil {
		req.SessionID = h.ID
	}
	if !c.model.Reasoning {
		req.Reasoning = ""
	}
	return loop.Request{Provider: c.provider, Request: req}, nil
}

// onLoopEvent stores what the loop produced and passes its events on.
func (a *Agent) onLoopEvent(ctx context.Context, e loop.Event) {
	switch e := e.(type) {
	case loop.RunStart:
		a.emit(AgentStart{})
	case loop.RunEnd:
		switch e.Stopped {
		case loop.StoppedTurns:
			a.notice(NoticeWarning, fmt.Sprintf("The run stopped after %d turns, the limit maxTurns sets (--max-turns); send a message to go on.", e.Turns))
		case loop.StoppedToolErrors:
			a.notice(NoticeWarning, fmt.Sprintf("The run stopped: the model's tool calls all failed %d turns in a row; send a message to go on.", loop.StopAfterErrors))
		}
		a.emit(AgentEnd{Messages: e.Messages, WillRetry: a.decideRetry(lastAssistantOf(e.Messages))})
	case loop.Backoff:
		a.notice(NoticeWarning, fmt.Sprintf("The model's tool calls all failed %d turns in a row; waiting %v before the next request.", e.Failures, e.Delay))
	case loop.TurnStart, loop.TurnEnd, loop.ToolStart, loop.ToolUpdate, loop.ToolEnd:
		a.emit(e.(Event))
	case loop.MessageStart:
		if am, ok := e.Message.(*llm.AssistantMessage); ok {
			meta := *am // the metadata as the stream began, for the updates
			meta.Content = nil
			a.mu.Lock()
			a.conv.visible, a.conv.reply = true, &meta
			a.mu.Unlock()
		}
		a.emit(e)
	case loop.MessageUpdate:
		a.mu.Lock()
		reply := a.conv.reply
		a.mu.Unlock()
		a.emit(MessageUpdate{Message: reply, Event: e.Event})
	case loop.MessageEnd:
		entry := a.store(ctx, e.Message)
		a.emit(MessageEnd{Message: e.Message, Entry: entry, Err: e.Err})
		if am, ok := e.Message.(*llm.AssistantMessage); ok {
			a.afterReply(am, e.Err)
		}
	}
}

// store appends a finished message to the session. A message that cannot be
// stored stops the run: going on would lose the conversation. Once one
// could not be written, the messages that end the run are not written
// either (the file stays what the conversation was up to the failure), and
// each tool result among them is named as lost: that tool did run.
func (a *Agent) store(ctx context.Context, m llm.Message) *session.Entry {
	a.mu.Lock()
	var e *session.Entry
	err := errStoreStopped
	told := a.conv.storeFailed
	if !told {
		e, err = a.appendLocked(&session.MessageEntry{Message: m})
	}
	cancel := a.conv.cancel
	var f *WriteFailure
	if err != nil {
		a.conv.storeFailed = true
		if a.conv.writeFailure == nil {
			a.conv.writeFailure = &WriteFailure{File: a.s.File(), Err: err}
		}
		f = a.conv.writeFailure
		if r, ok := m.(*llm.ToolResultMessage); ok && ran(r) {
			f.LostResults = append(f.LostResults, ToolCallRef{ID: r.ToolCallID, Name: r.ToolName})
		}
	}
	a.mu.Unlock()
	if err == nil {
		return e
	}
	r, isResult := m.(*llm.ToolResultMessage)
	switch {
	case isResult && ran(r):
		why := err
		if told {
			why = f.Err
		}
		a.notice(NoticeError, fmt.Sprintf("the tool call %s (%s) ran, but its result could not be written to the session file, so the run stops: %v", r.ToolName, r.ToolCallID, why))
	case !told:
		a.notice(NoticeError, fmt.Sprintf("could not write to the session file, so the run stops: %v", err))
	}
	if cancel != nil {
		cancel()
	}
	return nil
}

// ran reports whether the tool of a result ran (a call refused before it
// ran, or cut off before it started, took no time).
func ran(r *llm.ToolResultMessage) bool { return r.DurationMs > 0 }

// errStoreStopped is why a message after one that could not be written is
// not written either.
var errStoreStopped = errors.New("not written after an earlier write failed")

// appendLocked appends p at the leaf, opening a session loaded read-only for
// appending first (see appendAt).
func (a *Agent) appendLocked(p session.Payload) (*session.Entry, error) {
	return a.appendAtLocked(context.Background(), a.s.LeafID(), p)
}

// afterReply updates the retry and recovery state after a reply.
func (a *Agent) afterReply(m *llm.AssistantMessage, err error) {
	a.mu.Lock()
	c := &a.conv
	ok := m.StopReason != llm.StopReasonError && m.StopReason != llm.StopReasonAborted
	if ok && m.StopReason != llm.StopReasonLength {
		c.recovered = false
	}
	c.lastErr = err
	attempt := c.retries
	if ok && attempt > 0 {
		c.retries = 0
	}
	a.mu.Unlock()
	if ok && attempt > 0 {
		a.emit(RetryEnd{Success: true, Attempt: attempt})
	}
}

// betweenTurns runs between the turns of a run: a settings file changed
// meanwhile is read, the threshold check (a long tool loop compacts before
// its next request), then the system prompt patch if the prompt or tools
// changed.
func (a *Agent) betweenTurns(ctx context.Context, last loop.Turn) []llm.Message {
	a.reloadSettings(ctx) // a settings file changed during the turn applies to the next
	a.checkThreshold(ctx, siteBetweenTurns, last.Message)
	if patch := a.systemPatch(); patch != nil {
		return []llm.Message{patch}
	}
	return nil
}

// systemPatch returns the system message that brings the session's system
// prompt and tools to what the agent wants, or nil when they are current.
func (a *Agent) systemPatch() *session.SystemMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.systemPatchLocked()
}

// systemPatchLocked is systemPatch with a.mu held. The sections are the
// prompt's and the pins' of the path (pins.go).
func (a *Agent) systemPatchLocked() *session.SystemMessage {
	spec := a.conv.prompt
	if spec == nil {
		return nil
	}
	sctx, err := a.s.Context("")
	if err != nil {
		return nil
	}
	tools := make([]llm.Tool, len(a.conv.tools))
	for i, t := range a.conv.tools {
		tools[i] = t.Spec().LLM()
	}
	sections := append(spec.sections(), pinSections(compaction.PinsOf(a.s.LeafView()))...)
	return systemPatch(sctx.System(), sections, tools, a.now().UnixMilli())
}

// lastReply is the last assistant message on the session's path, aborted
// and failed ones included; stale when a compaction follows it on the path
// (it measured a context that no longer exists).
type lastReply struct {
	msg   *llm.AssistantMessage
	stale bool
}

// lastAssistant returns the last reply on the session's path (msg nil when
// there is none).
func (a *Agent) lastAssistant() lastReply {
	a.mu.Lock()
	defer a.mu.Unlock()
	path := a.s.LeafView()
	compacted := false
	for i := path.Len() - 1; i >= 0; i-- {
		switch path.Type(i) {
		case session.TypeCompaction:
			compacted = true
		case session.TypeMessage:
			if m, err := path.Entry(i).Message(); err == nil {
				if am, ok := m.(*llm.AssistantMessage); ok {
					return lastReply{msg: am, stale: compacted}
				}
			}
		}
	}
	return lastReply{}
}

// lastAssistantOf returns the last assistant message of msgs, or nil.
func lastAssistantOf(msgs []llm.Message) *llm.AssistantMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if am, ok := msgs[i].(*llm.AssistantMessage); ok {
			return am
		}
	}
	return nil
}

// notice tells the front ends something outside the conversation.
func (a *Agent) notice(level NoticeLevel, text string) {
	a.emit(Notice{Level: level, Text: text})
}

// beginManual makes the agent busy with a manual operation (a compaction,
// or a navigation, summarizing when compacting is set) after aborting a run
// in progress; the context it returns is cancelled by Abort, and release
// makes the agent idle again.
func (a *Agent) beginManual(ctx context.Context, compacting bool) (context.Context, func(), error) {
	a.Abort()
	ctx, cancel := context.WithCancel(ctx)
	ev := evManual
	if compacting {
		ev = evManualSummary
	}
	a.mu.Lock()
	if !a.beginLocked(cancel, ev) {
		a.mu.Unlock()
		cancel()
		return nil, nil, ErrBusy
	}
	a.mu.Unlock()
	a.afterSettled()
	return ctx, func() {
		a.mu.Lock()
		release := a.endLocked()
		a.mu.Unlock()
		release()
	}, nil
}

// afterSettled waits until the AgentSettled of the prompt before has been
// emitted.
func (a *Agent) afterSettled() {
	a.mu.Lock()
	prev := a.conv.settling
	a.mu.Unlock()
	if prev != nil {
		<-prev
	}
}
