package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/prime-agent/prime/llm/registry"
)

// Errors callers branch on with errors.Is. An operation that finds nothing
// to do returns compaction's *NotCompactableError (ErrNothingToCompact,
// ErrAlreadyCompacted, ErrNothingToSummarize) unchanged; an unknown entry id
// wraps session.ErrNotFound.
var (
	// ErrCancelled means the operation was stopped before it wrote
	// anything: its context was cancelled (Ctrl-C) or a hook cancelled it
	// (session_before_compact, session_before_tree). The error is a
	// *CancelledError.
	ErrCancelled = errors.New("cancelled")
	// ErrNoModel means no summarizer model was named anywhere: not in the
	// request, not in compaction.model, not in the session.
	ErrNoModel = errors.New("no summarizer model")
)

// CancelledError reports an operation stopped before it wrote anything.
type CancelledError struct {
	// Op is the operation stopped.
	Op Op
	// Hook names the hook that cancelled the operation; empty when the
	// context did.
	Hook string
	// Cause is why: the context's error, or ErrHookCancelled.
	Cause error
}

// ErrHookCancelled is the Cause of a [CancelledError] when a hook answered
// cancel.
var ErrHookCancelled = errors.New("a hook cancelled it")

// Error says what was cancelled, by whom, and that nothing was written,
// e.g. "compaction cancelled, nothing written" or "compaction cancelled by
// hook "./check.sh", nothing written".
func (e *CancelledError) Error() string {
	if e.Hook != "" {
		return fmt.Sprintf("%s cancelled by hook %q, nothing written", e.Op, e.Hook)
	}
	msg := string(e.Op) + " cancelled, nothing written"
	if e.Cause != nil && !errors.Is(e.Cause, context.Canceled) {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// hookCancelled is the error of an operation a hook cancelled.
func hookCancelled(op Op, by string) *CancelledError {
	return &CancelledError{Op: op, Hook: by, Cause: ErrHookCancelled}
}

// Unwrap returns ErrCancelled and the cause.
func (e *CancelledError) Unwrap() []error { return []error{ErrCancelled, e.Cause} }

// cancelled returns a *CancelledError when err comes from ctx being done
// (directly or through the summarizer), else err.
func cancelled(ctx context.Context, op Op, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return &CancelledError{Op: op, Cause: cerr}
	}
	return err
}

func isCancelled(err error) bool { return errors.Is(err, ErrCancelled) }

// ModelError reports a summarizer model that cannot be used. Err is
// ErrNoModel, registry.ErrUnknownModel, registry.ErrNoKey,
// registry.ErrUnsupportedAPI, or the error reading models.json.
type ModelError struct {
	// Ref is the model ("provider/id"), empty with ErrNoModel.
	Ref string
	// Source is where the choice came from (SourceRequest,
	// SourceSettings, SourceSession).
	Source string
	// Why explains ErrNoModel.
	Why string
	Err error
}

// Error says which model and why, in words a user can act on.
func (e *ModelError) Error() string {
	if e.Ref == "" {
		if e.Why != "" {
			return e.Err.Error() + ": " + e.Why
		}
		return e.Err.Error()
	}
	what := fmt.Sprintf("summarizer %s", e.Ref)
	switch e.Source {
	case SourceSettings:
		what += " (compaction.model)"
	case SourceSession:
		what += " (the session's model)"
	}
	if errors.Is(e.Err, registry.ErrUnknownModel) {
		return what + ": not a model Prime knows (see 'prime models'; models.json can add it)"
	}
	return what + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *ModelError) Unwrap() error { return e.Err }

// WriteFailure says that a message could not be written to the session
// file (a full or read-only disk, a file truncated, replaced or removed
// meanwhile), so the run that produced it stopped. Print and JSON modes
// exit non-zero on it: the answer on screen is not in the session.
type WriteFailure struct {
	// File is the session file.
	File string
	// Err is why the first message could not be written.
	Err error
	// LostResults are the tool calls that ran but whose results are not in
	// the file.
	LostResults []ToolCallRef
}

// ToolCallRef names one tool call.
type ToolCallRef struct {
	ID, Name string
}

func (f *WriteFailure) Error() string {
	msg := fmt.Sprintf("could not write to the session file: %v", f.Err)
	for _, c := range f.LostResults {
		msg += fmt.Sprintf("; the tool call %s (%s) ran, but its result is not in the file", c.Name, c.ID)
	}
	return msg
}

func (f *WriteFailure) Unwrap() error { return f.Err }

// WriteFailure returns the first failure to write a message to the session
// file since the agent was made, or nil.
func (a *Agent) WriteFailure() *WriteFailure {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f := a.conv.writeFailure; f != nil {
		c := *f
		c.LostResults = slices.Clone(f.LostResults)
		return &c
	}
	return nil
}
