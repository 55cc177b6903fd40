package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/prime-agent/prime/permission"
)

// ApprovalRequest is a tool call the permission mode asks the user about
// (an [ApprovalAsked] event); a front end answers it with [Agent.Answer].
type ApprovalRequest struct {
	// ID names the request in Answer.
	ID string
	// Tool is the tool's name ("bash", "edit", "mcp__server__tool").
	Tool string
	// Command is a bash call's command line.
	Command string
	// Path is a write's or edit's file as the model named it.
	Path string
	// Preview shows what a write or an edit changes: the edits as removed
	// (-) and added (+) lines, or the file's new text.
	Preview string
	// Reason says why this call asks.
	Reason string
	// Rerun: the command failed in the sandbox, and the question is
	// whether to run it again outside it, with the user's full rights.
	Rerun bool
	// Always is the rule an "always" answer records ("Bash(npm test:*)");
	// "" when the question offers no "always".
	Always string
}

// Choice is the user's answer to an approval request.
type Choice int

// Choices.
const (
	// ChoiceDeny refuses the call (the zero Answer).
	ChoiceDeny Choice = iota
	// ChoiceOnce allows this call.
	ChoiceOnce
	// ChoiceAlways allows this call and records the request's rule, so
	// that such calls no longer ask.
	ChoiceAlways
)

// Answer is a front end's answer to an approval request.
type Answer struct {
	Choice Choice
	// Message, with ChoiceDeny, is the user's word to the model, which
	// reads it in the call's result.
	Message string
}

// ApprovalAsked asks the front end to answer Request with [Agent.Answer].
// The call waits until it is answered, or the run is aborted.
type ApprovalAsked struct{ Request ApprovalRequest }

// ApprovalSettled ends a request: answered, or (Cancelled) given up
// because the run was aborted or the agent closed.
type ApprovalSettled struct {
	ID        string
	Answer    Answer
	Cancelled bool
}

// EventType returns "approval_request".
func (ApprovalAsked) EventType() string { return "approval_request" }

// EventType returns "approval_settled".
func (ApprovalSettled) EventType() string { return "approval_settled" }

// Approvals says who answers approval requests ([Config].Approvals).
type Approvals int

const (
	// ApprovalsNone: no one can answer (print and JSON modes); what the
	// mode would ask is denied, with a tool result that says why.
	ApprovalsNone Approvals = iota
	// ApprovalsAsk: the front end answers [ApprovalAsked] events.
	ApprovalsAsk
	// ApprovalsApprove: what the mode would ask is allowed (--yes).
	ApprovalsApprove
)

// ErrNoApproval is returned by Answer for a request that is not waiting.
var ErrNoApproval = errors.New("no such approval request is waiting")

// approvalState holds the requests waiting for an answer and the
// session's permission mode, when the user changed it.
type approvalState struct {
	mu      sync.Mutex
	next    int
	pending map[string]chan Answer
	// mode is the mode set with SetPermissionMode; "" means the settings'.
	mode permission.Mode
	// allowed are the rules "always" answers added in this session, kept
	// even when they could not be saved.
	allowed, unconfined []string
	closed              bool
	// once makes conf from Config.Confinement on first need.
	once sync.Once
	conf Confinement
}

// Answer answers the waiting approval request id.
func (a *Agent) Answer(id string, ans Answer) error {
	st := &a.approvals
	st.mu.Lock()
	ch, ok := st.pending[id]
	if ok {
		delete(st.pending, id)
	}
	st.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoApproval, id)
	}
	ch <- ans // buffered: the asker may have given up already
	return nil
}

// PendingApprovals lists the requests waiting for an answer, by id.
func (a *Agent) PendingApprovals() []string {
	st := &a.approvals
	st.mu.Lock()
	defer st.mu.Unlock()
	var ids []string
	for id := range st.pending {
		ids = append(ids, id)
	}
	return ids
}

// cancelApprovals gives up every waiting request (the agent closes).
func (a *Agent) cancelApprovals() {
	st := &a.approvals
	st.mu.Lock()
	st.closed = true
	for id, ch := range st.pending {
		delete(st.pending, id)
		close(ch)
	}
	st.mu.Unlock()
}

// errCannotAsk is an approval no one can answer.
var errCannotAsk = errors.New("no one can answer")

// ask puts req to the front end and waits for its answer; the error says
// the request was given up (ctx done, agent closed) or cannot be asked.
func (a *Agent) ask(ctx context.Context, req ApprovalRequest) (Answer, error) {
	switch a.cfg.Approvals {
	case ApprovalsApprove:
		return Answer{Choice: ChoiceOnce}, nil
	case ApprovalsAsk:
	default:
		return Answer{}, errCannotAsk
	}
	st := &a.approvals
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return Answer{}, context.Canceled
	}
	if st.pending == nil {
		st.pending = map[string]chan Answer{}
	}
	st.next++
	req.ID = "approval-" + strconv.Itoa(st.next)
	ch := make(chan Answer, 1)
	st.pending[req.ID] = ch
	st.mu.Unlock()
	a.emit(ApprovalAsked{Request: req})
	select {
	case ans, ok := <-ch:
		if !ok {
			a.emit(ApprovalSettled{ID: req.ID, Cancelled: true})
			return Answer{}, context.Canceled
		}
		a.emit(ApprovalSettled{ID: req.ID, Answer: ans})
		return ans, nil
	case <-ctx.Done():
		st.mu.Lock()
		delete(st.pending, req.ID)
		st.mu.Unlock()
		a.emit(ApprovalSettled{ID: req.ID, Cancelled: true})
		return Answer{}, ctx.Err()
	}
}
