package hook

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/settings"
)

// Kind says what went wrong with a handler.
type Kind uint8

// The kinds of [Report].
const (
	// Skipped: the handler was not run (an untrusted project's hook, hooks
	// disabled, an event Prime does not emit).
	Skipped Kind = iota + 1
	// Failed: the handler returned an error, its command could not be
	// started, exited with a non-zero status, was killed by a signal, or
	// wrote more output than allowed.
	Failed
	// Panicked: an in-process handler panicked.
	Panicked
	// TimedOut: the handler ran past its timeout. A command's whole process
	// group was killed; an in-process handler was abandoned (it may still
	// be running; whatever it returns later is ignored).
	TimedOut
	// Invalid: the handler answered, but not with a valid result (output
	// that is not one JSON object, a member of the wrong type, a custom
	// summary that does not fit the session). The answer was ignored whole.
	Invalid
)

func (k Kind) String() string {
	switch k {
	case Skipped:
		return "skipped"
	case Failed:
		return "failed"
	case Panicked:
		return "panicked"
	case TimedOut:
		return "timed out"
	case Invalid:
		return "invalid result"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// MarshalText returns the kind's name ("timed out", "invalid result", …).
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// SkipReason says why a command hook was skipped.
type SkipReason uint8

// The reasons for [Skipped] reports.
const (
	// SkipDisabled: command hooks are turned off ([Options.Disabled],
	// --no-hooks).
	SkipDisabled SkipReason = iota + 1
	// SkipUnknownEvent: the hook names an event Prime does not emit.
	SkipUnknownEvent
	// SkipUntrusted: the hook comes from a project the user has not
	// trusted.
	SkipUntrusted
	// SkipUnsafeFile: the hook's program is a file that another user could
	// change (it, or a directory above it, is writable by others).
	SkipUnsafeFile
)

func (s SkipReason) String() string {
	switch s {
	case SkipDisabled:
		return "disabled"
	case SkipUnknownEvent:
		return "unknown event"
	case SkipUntrusted:
		return "untrusted"
	case SkipUnsafeFile:
		return "unsafe file"
	}
	return fmt.Sprintf("SkipReason(%d)", uint8(s))
}

// Report tells the user about a handler that was skipped or that did not do
// its job. Dispatch never stops for a failing handler: it is reported and
// the next one runs. A Report is an error so that callers can join or wrap
// it; its Error text names the event, the handler and, for a command hook,
// the settings file and key that declare it.
type Report struct {
	Kind Kind
	// Skip says why a Skipped handler was skipped; zero for other kinds.
	// Callers group skipped hooks by it ("3 hooks skipped: project not
	// trusted").
	Skip SkipReason
	// Event is the event being dispatched (for a skipped hook, the event it
	// is declared for).
	Event string
	// Handler names the handler: an in-process handler's [Hooks.Name], or
	// a command hook's command line as written in settings.
	Handler string
	// Source is where a command hook is declared; zero for in-process
	// handlers.
	Source settings.Source
	// Detail says what happened, in a sentence.
	Detail string
	// ExitCode is a command's exit status when it exited with a non-zero
	// one; 0 otherwise.
	ExitCode int
	// Output is the end of a command's standard error (at most
	// [maxReportLines] lines), or the stack of a panic.
	Output string
}

// Error returns "event: handler (where): detail", followed by the output
// lines indented on the lines after it.
func (r Report) Error() string {
	var b strings.Builder
	if r.Event != "" {
		b.WriteString(r.Event + ": ")
	}
	b.WriteString(r.handlerName())
	b.WriteString(": ")
	b.WriteString(r.Detail)
	if out := strings.TrimRight(r.Output, "\n"); out != "" {
		for line := range strings.SplitSeq(out, "\n") {
			b.WriteString("\n    " + line)
		}
	}
	return b.String()
}

// MarshalJSONTo writes the report for --json output: {"kind", "event",
// "handler", "detail", and, when they apply, "skip" ("disabled",
// "unknown event", "untrusted"), "scope" ("global" or "project"), "file",
// "key", "exitCode", "output"}.
func (r Report) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonwire.WriteObject(enc, func(w *jsonwire.ObjectWriter) {
		w.Str("kind", r.Kind.String())
		w.Str("event", r.Event)
		w.Str("handler", r.Handler)
		w.Str("detail", r.Detail)
		if r.Skip != 0 {
			w.Str("skip", r.Skip.String())
		}
		if r.Source.File != "" {
			w.Str("scope", r.Source.Scope.String())
			w.Str("file", r.Source.File)
			w.Str("key", r.Source.Key)
		}
		if r.ExitCode != 0 {
			w.Int("exitCode", int64(r.ExitCode))
		}
		w.OptStr("output", r.Output)
	})
}

// handlerName is the handler as the user knows it: an in-process handler by
// name, a command hook by its command and the place that declares it.
func (r Report) handlerName() string {
	if r.Source.File == "" {
		return "in-process hook " + quote(r.Handler)
	}
	return fmt.Sprintf("hook %s (%s settings %s, %s)", quote(r.Handler), r.Source.Scope, r.Source.Key, r.Source.File)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// Limits on what a report quotes.
const (
	// maxReportLines is how many of the last stderr lines a report keeps.
	maxReportLines = 20
	// maxReportBytes bounds the quoted stderr and output in bytes.
	maxReportBytes = 4 << 10
)

// lastLines returns the last maxReportLines lines of text, at most
// maxReportBytes of it, without a trailing newline.
func lastLines(text string) string {
	text = strings.TrimRight(text, "\n")
	if len(text) > maxReportBytes {
		text = text[len(text)-maxReportBytes:]
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
		text = strings.ToValidUTF8(text, "�")
	}
	lines := strings.Split(text, "\n")
	if len(lines) > maxReportLines {
		lines = lines[len(lines)-maxReportLines:]
	}
	return strings.Join(lines, "\n")
}
