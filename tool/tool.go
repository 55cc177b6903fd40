package tool

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
)

// Tool is one tool the model may call.
type Tool interface {
	// Spec describes the tool to the model and to the system prompt.
	Spec() Spec
	// Run executes one call whose arguments have passed [Validate]. An error
	// becomes an error result whose text is the error's message; a Result
	// with IsError set is an error result that keeps its details.
	Run(ctx context.Context, call Call) (Result, error)
}

// Spec is what the model is told about a tool.
type Spec struct {
	// Name is the name the model calls the tool by.
	Name string
	// Description is sent with the tool's declaration.
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters jsontext.Value
	// Snippet is the tool's line in the system prompt's list of tools.
	Snippet string
	// Guidelines are rules for using the tool, listed in the system prompt.
	Guidelines []string
}

// LLM returns the declaration sent to a provider.
func (s Spec) LLM() llm.Tool {
	return llm.Tool{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the model's id for the call.
	ID string
	// Args is the arguments object, validated and coerced by [Validate].
	Args jsontext.Value
	// Update, when not nil, receives partial results while the tool runs
	// (bash's output so far). It must return quickly.
	Update func(Result)
}

// Result is what a call produced.
type Result struct {
	// Content is what the model sees: text, and images for read.
	Content []llm.Content
	// Details is data for user interfaces (a diff, truncation counts, the
	// path of the full output), never sent to the model. Nil for none.
	Details jsontext.Value
	// IsError marks a failed call that still has content and details to
	// show (a command that exited with a non-zero status).
	IsError bool
}

// ArgPreparer is implemented by tools that repair common mistakes in the
// arguments models send before they are validated (edit accepts its edits
// as a JSON string, a single object, or legacy top-level oldText/newText).
type ArgPreparer interface {
	PrepareArgs(args jsontext.Value) jsontext.Value
}

// PathTool is implemented by tools whose calls touch files named in their
// arguments. The loop runs calls that touch the same file one after another,
// in call order; calls on different files run in parallel.
type PathTool interface {
	// Paths returns the absolute, cleaned paths a call with these validated
	// arguments reads or writes.
	Paths(args jsontext.Value) []string
}
