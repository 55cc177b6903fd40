package printmode

import (
	"errors"
	"fmt"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/agentjson"
	"github.com/prime-agent/prime/internal/numfmt"
)

// Event handles one of the agent's events: in JSON mode it writes the
// event's line on standard output; in print mode it tells, on standard
// error, what the user should know while the agent works (notices,
// retries, compactions, hooks that failed).
func (p *Printer) Event(e agent.Event) {
	if p.json {
		p.jsonEvent(e)
		return
	}
	p.textEvent(e)
}

func (p *Printer) textEvent(e agent.Event) {
	w := p.stderr
	switch e := e.(type) {
	case agent.Notice:
		fmt.Fprintf(w, "prime: %s: %s\n", e.Level, e.Text)
	case agent.RetryStart:
		fmt.Fprintf(w, "prime: %s; retrying in %s (%d/%d)…\n", e.ErrorMessage, agent.RoundDelay(e.Delay), e.Attempt, e.MaxAttempts)
	case agent.RetryEnd:
		if !e.Success {
			fmt.Fprintf(w, "prime: %s\n", agent.GaveUpText(e))
			p.gaveUp.Store(true)
		}
	case agent.CompactionStart:
		if e.Reason != agent.ReasonManual {
			fmt.Fprintf(w, "prime: compacting the context (%s)…\n", e.Reason)
		}
	case agent.CompactionEnd:
		switch {
		case e.Result != nil && e.Reason != agent.ReasonManual:
			fmt.Fprintf(w, "prime: compacted: %s → %s tokens\n", numfmt.Commas(e.Result.TokensBefore), numfmt.Commas(e.Result.TokensAfter))
		case e.Aborted:
			fmt.Fprintln(w, "prime: compaction cancelled, nothing written")
		case errors.As(e.Err, new(*agent.NotCompactableError)) && e.Reason == agent.ReasonManual:
			// said by compact, on standard output
		case e.Err != nil:
			fmt.Fprintf(w, "prime: %s\n", agent.CompactionErrorText(e.Reason, e.Err))
		}
	case *agent.Progress:
		if e.Kind == agent.ProgressHookReport && e.HookReport != nil {
			fmt.Fprintf(w, "prime: %v\n", e.HookReport)
		}
	}
}

// jsonEvent writes every event pi has a wire form for as one JSON line on
// standard output; notices go to standard error.
func (p *Printer) jsonEvent(e agent.Event) {
	if n, ok := e.(agent.Notice); ok {
		fmt.Fprintf(p.stderr, "prime: %s: %s\n", n.Level, n.Text)
		return
	}
	line, ok, err := agentjson.MarshalEvent(e)
	if err != nil {
		fmt.Fprintf(p.stderr, "prime: cannot encode a %s event: %v\n", e.EventType(), err)
		return
	}
	if ok {
		p.stdout.Write(append(line, '\n'))
	}
}
