package rpc

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
)

// The options of the select an approval request is asked with, as the
// client shows them and answers with one of them.
const (
	optionOnce        = "Allow once"
	optionAlways      = "Always allow"
	optionDeny        = "Deny"
	optionDenyMessage = "Deny with a message to the model"
)

// uiRequests are the extension_ui_request dialogs waiting for the client's
// extension_ui_response, by their id.
type uiRequests struct {
	mu      sync.Mutex
	pending map[string]uiPending
}

// uiPending is one dialog: the approval request it asks, and whether it
// is the select or the input of a "deny with a message".
type uiPending struct {
	approval string
	input    bool
}

// approvalDetails is the approval a select asks, for clients that show
// more than its title (pi's ignore the member).
type approvalDetails struct {
	Tool    string `json:"tool"`
	Command string `json:"command,omitzero"`
	Path    string `json:"path,omitzero"`
	Preview string `json:"preview,omitzero"`
	Reason  string `json:"reason"`
	Rerun   bool   `json:"rerun,omitzero"`
	Always  string `json:"always,omitzero"`
}

type uiRequest struct {
	Type        string           `json:"type"`
	ID          string           `json:"id"`
	Method      string           `json:"method"`
	Title       string           `json:"title"`
	Options     []string         `json:"options,omitzero"`
	Placeholder string           `json:"placeholder,omitzero"`
	Approval    *approvalDetails `json:"approval,omitzero"`
}

// approvalTitle is the question a select asks.
func approvalTitle(r agent.ApprovalRequest) string {
	what := r.Tool
	switch {
	case r.Rerun:
		what = "Run again outside the sandbox: " + r.Command
	case r.Command != "":
		what = "Allow bash: " + r.Command
	case r.Path != "":
		what = fmt.Sprintf("Allow %s of %s", r.Tool, r.Path)
	default:
		what = "Allow the tool " + r.Tool
	}
	return what + "? (" + r.Reason + ")"
}

// askApproval writes the select that asks an approval request.
func (s *Server) askApproval(r agent.ApprovalRequest) {
	opts := []string{optionOnce}
	if r.Always != "" {
		opts = append(opts, optionAlways+" ("+r.Always+")")
	}
	opts = append(opts, optionDeny, optionDenyMessage)
	d := &approvalDetails{Tool: r.Tool, Command: r.Command, Path: r.Path, Preview: r.Preview, Reason: r.Reason, Rerun: r.Rerun, Always: r.Always}
	s.uiSend(uiRequest{Type: "extension_ui_request", ID: r.ID, Method: "select", Title: approvalTitle(r), Options: opts, Approval: d},
		uiPending{approval: r.ID})
}

// uiSend writes a dialog and records it as waiting.
func (s *Server) uiSend(req uiRequest, p uiPending) {
	line, err := json.Marshal(req, marshalOptions)
	if err != nil {
		s.diag("cannot encode an approval request: %v", err)
		return
	}
	s.ui.mu.Lock()
	if s.ui.pending == nil {
		s.ui.pending = map[string]uiPending{}
	}
	s.ui.pending[req.ID] = p
	s.ui.mu.Unlock()
	s.write(line)
}

// approvalSettled forgets the dialogs of a request the agent gave up.
func (s *Server) approvalSettled(e agent.ApprovalSettled) {
	s.ui.mu.Lock()
	defer s.ui.mu.Unlock()
	for id, p := range s.ui.pending {
		if p.approval == e.ID {
			delete(s.ui.pending, id)
		}
	}
}

// uiResponse reads a client's extension_ui_response: the option chosen in
// an approval's select (or cancelled: true, a denial), or the message of a
// denial. It is answered with a response, as every command is (pi's
// clients ignore it); one that answers no waiting dialog is a failure.
func (s *Server) uiResponse(_ context.Context, c *command) ([]byte, error) {
	id := c.str("id")
	value, hasValue := c.optStr("value")
	cancelled := c.optBool("cancelled")
	if c.err != nil {
		return nil, c.err
	}
	s.ui.mu.Lock()
	p, ok := s.ui.pending[id]
	delete(s.ui.pending, id)
	s.ui.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no dialog %q is waiting for an answer", id)
	}
	var ans agent.Answer
	switch {
	case cancelled || !hasValue:
	case p.input:
		ans.Message = value
	case value == optionOnce:
		ans.Choice = agent.ChoiceOnce
	case strings.HasPrefix(value, optionAlways):
		ans.Choice = agent.ChoiceAlways
	case value == optionDenyMessage:
		s.uiSend(uiRequest{Type: "extension_ui_request", ID: id + "-message", Method: "input",
			Title: "Why not? (the model reads this)", Placeholder: "what to do instead"}, uiPending{approval: p.approval, input: true})
		return nil, nil
	case value != optionDeny:
		s.diag("an extension_ui_response chose %q, which is not one of the options; the call is denied", value)
	}
	if err := s.ag.Answer(p.approval, ans); err != nil {
		return nil, err
	}
	return nil, nil
}
