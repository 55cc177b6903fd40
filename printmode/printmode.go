// Package printmode is the front end of "prime -p" and "prime --mode json":
// it sends each message to an agent in turn, waits for the agent to settle,
// and then prints the last answer (print mode) or, as they happen, every
// event as a JSON line (JSON mode).
//
//	p := printmode.New(printmode.Options{Stdout: os.Stdout, Stderr: os.Stderr})
//	ag := agent.New(s, agent.Config{Events: p.Event, ...})
//	err := p.Run(ctx, ag, []string{"explain main.go"}, nil)
//
// Standard output holds only the answer (or the JSON lines, the session
// header first); notices, retries and compactions go to standard error.
// A message "/compact [INSTRUCTIONS]" compacts the session instead of
// asking the model.
package printmode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/internal/termtext"
	"github.com/prime-agent/prime/llm"
)

// ErrFailed is what Run returns when the model failed, the answer was cut
// off or aborted, or the session could not be written; standard error
// already says which.
var ErrFailed = errors.New("the run failed")

// ErrInterrupted is what Run returns (wrapping the context's error) when
// its context was cancelled while the agent worked; standard error already
// says so.
var ErrInterrupted = errors.New("interrupted")

// CompactError is a "/compact" message's compaction that failed.
type CompactError struct{ Err error }

// Error is the compaction's error text.
func (e *CompactError) Error() string { return e.Err.Error() }

// Unwrap returns the compaction's error, for errors.Is and errors.As.
func (e *CompactError) Unwrap() error { return e.Err }

// Options are where a Printer writes and in which form.
type Options struct {
	Stdout, Stderr io.Writer
	// JSON selects JSON mode: every event with a wire form as one line on
	// Stdout, and no answer printed at the end.
	JSON bool
	// StdoutTerminal and StderrTerminal say that the stream is a
	// terminal: the text written to it then loses the escape sequences
	// and control characters in it (a reply or a server's message that
	// would set the title or write the clipboard). A pipe gets the text
	// exactly; JSON lines escape them anyway.
	StdoutTerminal, StderrTerminal bool
}

// terminalWriter writes text to a terminal as text only.
type terminalWriter struct{ w io.Writer }

func (t terminalWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(t.w, termtext.Clean(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Printer is one run of print or JSON mode. Its Event method is the
// agent's event handler; Run drives the agent.
type Printer struct {
	stdout, stderr io.Writer
	json           bool
	// gaveUp is set when retries ended in a failure the user was told
	// of ("gave up after 3 retries: …"), which finish then does not repeat.
	gaveUp atomic.Bool
}

// New returns a Printer writing to o's streams.
func New(o Options) *Printer {
	p := &Printer{stdout: o.Stdout, stderr: o.Stderr, json: o.JSON}
	if o.StdoutTerminal && !o.JSON {
		p.stdout = terminalWriter{o.Stdout}
	}
	if o.StderrTerminal {
		p.stderr = terminalWriter{o.Stderr}
	}
	return p
}

// Run sends each message in turn, the images with the first, each awaited
// until the agent settles, then prints the final answer (print mode). In
// JSON mode the session header is written first. It returns nil when the
// last reply was answered, [ErrFailed] when it failed, was aborted or was
// cut off, [ErrInterrupted] when ctx was cancelled, a [*CompactError] when
// a "/compact" message failed, and the agent's error when a prompt could
// not be sent.
func (p *Printer) Run(ctx context.Context, ag *agent.Agent, msgs []string, images []llm.Image) error {
	if p.json {
		p.stdout.Write(append(ag.HeaderJSON(), '\n'))
	}
	for i, m := range msgs {
		if instr, ok := compactCommand(m); ok {
			if err := p.compact(ctx, ag, instr); err != nil || i == len(msgs)-1 {
				return err // what the compaction did is the answer
			}
			continue
		}
		opts := agent.PromptOptions{}
		if i == 0 {
			opts.Images = images
		}
		if _, err := ag.Prompt(ctx, m, opts); err != nil {
			return err
		}
		if err := ag.Wait(ctx); err != nil {
			ag.Abort()
			fmt.Fprintln(p.stderr, "prime: interrupted; the session keeps everything up to here")
			return fmt.Errorf("%w: %w", ErrInterrupted, err)
		}
		if f := ag.WriteFailure(); f != nil {
			return p.writeFailed(f)
		}
	}
	return p.finish(ag)
}

// writeFailed ends the run when the session could not be written: the
// answer is not printed (it is not in the session), JSON mode's last line
// says why.
func (p *Printer) writeFailed(f *agent.WriteFailure) error {
	if p.json {
		type lost struct {
			ID   string `json:"toolCallId"`
			Name string `json:"toolName"`
		}
		line := struct {
			Type        string `json:"type"`
			SessionFile string `json:"sessionFile"`
			Error       string `json:"error"`
			LostResults []lost `json:"lostToolResults"`
		}{Type: "session_write_failed", SessionFile: f.File, Error: f.Err.Error(), LostResults: []lost{}}
		for _, c := range f.LostResults {
			line.LostResults = append(line.LostResults, lost{c.ID, c.Name})
		}
		if b, err := json.Marshal(line); err == nil {
			p.stdout.Write(append(b, '\n'))
		}
	}
	msg := "the session file could not be written, so the run stopped and its answer is not printed"
	for _, c := range f.LostResults {
		msg += fmt.Sprintf("; the tool call %s (%s) ran, but its result is not in the file", c.Name, c.ID)
	}
	fmt.Fprintf(p.stderr, "prime: %s\n", msg)
	return ErrFailed
}

// compactCommand reports whether a message is "/compact [INSTRUCTIONS]".
func compactCommand(m string) (string, bool) {
	m = strings.TrimSpace(m)
	if m == "/compact" {
		return "", true
	}
	if rest, ok := strings.CutPrefix(m, "/compact "); ok {
		return strings.TrimSpace(rest), true
	}
	return "", false
}

// compact runs a manual compaction and says what it did.
func (p *Printer) compact(ctx context.Context, ag *agent.Agent, instructions string) error {
	res, err := ag.Compact(ctx, agent.CompactRequest{Instructions: instructions})
	if errors.As(err, new(*agent.NotCompactableError)) {
		// An outcome, not a failure, as in prime compact: said once.
		if !p.json {
			fmt.Fprintln(p.stdout, err)
		}
		return nil
	}
	if err != nil {
		return &CompactError{Err: err}
	}
	if !p.json {
		fmt.Fprintf(p.stdout, "compacted: %s → %s tokens\n\n%s\n", numfmt.Commas(res.TokensBefore), numfmt.Commas(res.TokensAfter), res.Compaction.Summary)
	}
	return nil
}

// finish prints the last reply (print mode) and says whether it failed.
// As in pi, only the last message on the session's path counts: when it is
// not a reply (the run ended on a tool result, or nothing was sent),
// nothing is printed.
func (p *Printer) finish(ag *agent.Agent) error {
	last, _ := ag.LastMessage().(*llm.AssistantMessage)
	if last == nil {
		return nil
	}
	switch last.StopReason {
	case llm.StopReasonError, llm.StopReasonAborted:
		msg := last.ErrorMessage
		if msg == "" {
			msg = "the request " + string(last.StopReason)
		}
		if last.StopReason != llm.StopReasonError || !p.gaveUp.Load() {
			fmt.Fprintf(p.stderr, "prime: %s\n", msg)
		}
		return ErrFailed
	}
	if !p.json {
		for _, c := range last.Content {
			if t, ok := c.(llm.Text); ok {
				fmt.Fprintln(p.stdout, t.Text)
			}
		}
	}
	if last.StopReason == llm.StopReasonLength {
		fmt.Fprintln(p.stderr, "prime: the answer was cut off at the model's output limit")
		return ErrFailed
	}
	return nil
}
