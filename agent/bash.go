package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/tool"
)

// BashUpdate streams the output of a command the user runs (RunBash).
type BashUpdate struct {
	// ID is the run's id, as RunBash was given it.
	ID    string
	Delta string
}

// EventType names the event as pi does.
func (BashUpdate) EventType() string { return "bash_execution_update" }

// ErrBashRunning means a user command is already running.
var ErrBashRunning = errors.New("a command is already running; wait for it or abort it")

// RunBash runs a shell command the user typed (pi's !cmd and !!cmd) in the
// conversation's directory, streaming its output as BashUpdate events with
// id, and records it in the session as a bashExecution message: the model
// sees it with the next request, unless excludeFromContext (!!cmd). While a
// run is going on the record waits until the run ends, so that it never comes
// between a tool call and its result. AbortBash stops the command.
func (a *Agent) RunBash(ctx context.Context, id, command string, excludeFromContext bool) (*session.BashExecution, error) {
	a.mu.Lock()
	if a.conv.bashCancel != nil {
		a.mu.Unlock()
		return nil, ErrBashRunning
	}
	ctx, cancel := context.WithCancel(ctx)
	a.conv.bashCancel = cancel
	a.mu.Unlock()
	defer func() {
		cancel()
		a.mu.Lock()
		a.conv.bashCancel = nil
		a.mu.Unlock()
	}()
	env := tool.Env{CWD: a.cwd(), Shell: a.settings().Conversation().ShellPath, Procs: a.cfg.Procs, Secrets: a.secretsPolicy()}
	res, err := tool.RunShell(ctx, env, command, func(delta string) {
		a.emit(BashUpdate{ID: id, Delta: delta})
	})
	if err != nil {
		return nil, err
	}
	rec := &session.BashExecution{
		Command: command, Output: res.Output, ExitCode: res.ExitCode, Cancelled: res.Cancelled,
		Truncated: res.Truncated, FullOutputPath: res.FullOutputPath, ExcludeFromContext: excludeFromContext,
		Timestamp: a.now().UnixMilli(),
	}
	a.mu.Lock()
	if a.conv.phase.prompting() {
		a.conv.heldBash = append(a.conv.heldBash, rec)
		a.mu.Unlock()
		return rec, nil
	}
	e, err := a.appendLocked(&session.MessageEntry{Message: rec})
	a.mu.Unlock()
	if err != nil {
		return rec, fmt.Errorf("the command ran, but could not be recorded in the session: %w", err)
	}
	a.emit(EntryAppended{Entry: e})
	return rec, nil
}

// AbortBash stops the user's command, if one runs.
func (a *Agent) AbortBash() {
	a.mu.Lock()
	cancel := a.conv.bashCancel
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// flushHeldBash records the user's commands that finished while a run was
// going on, now that it is not between a tool call and its result.
func (a *Agent) flushHeldBash() {
	a.mu.Lock()
	held := a.conv.heldBash
	a.conv.heldBash = nil
	a.mu.Unlock()
	ps := make([]session.Payload, len(held))
	for i, rec := range held {
		ps[i] = &session.MessageEntry{Message: rec}
	}
	a.appendEntries(ps, "a command you ran could not be recorded in the session")
}

// appendEntries appends entries at the leaf for the agent's bookkeeping and
// tells the front ends (EntryAppended); a failure stops there and is a
// Notice that starts with failure.
func (a *Agent) appendEntries(ps []session.Payload, failure string) {
	a.mu.Lock()
	var appended []*session.Entry
	var failed error
	for _, p := range ps {
		e, err := a.appendLocked(p)
		if err != nil {
			failed = err
			break
		}
		appended = append(appended, e)
	}
	a.mu.Unlock()
	for _, e := range appended {
		a.emit(EntryAppended{Entry: e})
	}
	if failed != nil {
		a.notice(NoticeError, fmt.Sprintf("%s: %v", failure, failed))
	}
}
