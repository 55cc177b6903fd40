package hook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// Options configure a [Runner].
type Options struct {
	// Disabled turns off the command hooks declared in settings (prime's
	// --no-hooks); each is listed by [Runner.Skipped]. In-process Hooks
	// still run: a program that does not want them does not pass them.
	Disabled bool
	// Hooks are in-process handlers; they run before any command hook.
	// Use [Compose] for several.
	Hooks *Hooks
	// Timeout bounds each handler that does not set its own (a command's
	// "timeoutMs", [Hooks.Timeout]). Zero means [DefaultTimeout].
	Timeout time.Duration
	// Dir is the working directory of command hooks. Empty means the
	// project directory of the settings, else the current directory.
	Dir string
	// Env is added to the environment command hooks inherit, after
	// PRIME_HOOK_EVENT, PRIME_HOOK_SETTINGS and PRIME_PROJECT_DIR
	// ("KEY=value" strings; a later entry wins).
	Env []string
	// MaxOutput bounds a command hook's stdout in bytes. Zero means
	// [DefaultMaxOutput].
	MaxOutput int
}

// Runner dispatches events to handlers: first the in-process [Hooks] in
// order, then the command hooks of the settings (global file first, then
// the project's, each in file order). A Runner is immutable and safe for
// concurrent use. A nil *Runner has no handlers: every event passes
// through unchanged.
type Runner struct {
	handlers []*handler
	skipped  []Report
	timeout  time.Duration
	exec     execOptions
}

// handler is one in-process Hooks value or one command hook.
type handler struct {
	name    string
	source  settings.Source
	timeout time.Duration
	goh     *Hooks   // in-process, or
	cmd     *command // a command hook
}

func (h *handler) handles(event string) bool {
	if h.cmd != nil {
		return h.cmd.hook.Event == event
	}
	return h.goh.handles(event)
}

// New returns a runner for the in-process handlers of opts and the command
// hooks s declares (s may be nil: no command hooks). Command hooks are
// skipped, and listed by [Runner.Skipped], when opts.Disabled is set, when
// they name an event Prime does not emit, or when they come from a project
// the user has not trusted ([settings.Settings.Trusted]): a cloned
// repository must not be able to run commands on the user's machine just
// by being opened.
func New(s *settings.Settings, opts Options) *Runner {
	r := &Runner{timeout: opts.Timeout}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	r.exec = execOptions{dir: opts.Dir, env: opts.Env, maxOutput: opts.MaxOutput, projectDir: s.ProjectDir()}
	if r.exec.dir == "" {
		r.exec.dir = s.ProjectDir()
	}
	if r.exec.maxOutput <= 0 {
		r.exec.maxOutput = DefaultMaxOutput
	}
	for i, h := range opts.Hooks.flatten() {
		name := h.Name
		if name == "" {
			name = fmt.Sprintf("in-process hooks #%d", i+1)
		}
		r.handlers = append(r.handlers, &handler{name: name, goh: h, timeout: r.timeoutOf(h.Timeout)})
	}
	trusted := -1 // unknown until a project hook asks
	for _, h := range s.Hooks() {
		c := newCommand(h)
		skip := func(why SkipReason, detail string) {
			r.skipped = append(r.skipped, Report{Kind: Skipped, Skip: why, Event: h.Event, Handler: c.display(), Source: h.Source, Detail: detail})
		}
		if h.Source.Scope == settings.Project && trusted < 0 {
			trusted = 0
			if s.Trusted(s.ProjectDir()) {
				trusted = 1
			}
		}
		switch {
		case opts.Disabled:
			skip(SkipDisabled, "not run: hooks are disabled (--no-hooks)")
		case !knownEvent(h.Event):
			skip(SkipUnknownEvent, fmt.Sprintf("not run: Prime emits no event %q (it emits %s)", h.Event, strings.Join(Events(), ", ")))
		case h.Source.Scope == settings.Project && trusted == 0:
			skip(SkipUntrusted, fmt.Sprintf("not run: the project %s is not trusted, and a project's hooks could run any command; "+
				"if you trust it, run \"prime trust\" in it", s.ProjectDir()))
		case c.unsafe() != nil:
			skip(SkipUnsafeFile, fmt.Sprintf("not run: %v, so another user could change what it does", c.unsafe()))
		default:
			r.handlers = append(r.handlers, &handler{name: c.display(), source: h.Source, cmd: c,
				timeout: r.timeoutOf(time.Duration(h.TimeoutMs) * time.Millisecond)})
		}
	}
	return r
}

func (r *Runner) timeoutOf(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return r.timeout
}

// Skipped lists the command hooks that will not run, and why. Commands
// print it before they start, so that a user whose hook does nothing
// learns the reason. (Declarations that are malformed never reach the
// runner; [settings.Settings.Problems] lists them.)
func (r *Runner) Skipped() []Report {
	if r == nil {
		return nil
	}
	return append([]Report(nil), r.skipped...)
}

// Handles reports whether any handler will receive event, so that a
// caller can skip work only a handler would need.
func (r *Runner) Handles(event string) bool {
	return len(r.list(event)) > 0
}

// Handlers names the handlers that will receive event, in dispatch order:
// an in-process handler by its [Hooks.Name], a command hook by its command
// line. A dry run uses it to say what a real run would call.
func (r *Runner) Handlers(event string) []string {
	var names []string
	for _, h := range r.list(event) {
		names = append(names, h.name)
	}
	return names
}

// WithEnv returns a runner like r whose command hooks also get env
// ("KEY=value" strings, after [Options.Env]; a later entry wins). The
// orchestration uses it to tell a command which session and entry an
// operation concerns (PRIME_SESSION_FILE, ...), which the code that built
// the runner may not know. r is not changed; a nil r gives nil.
func (r *Runner) WithEnv(env ...string) *Runner {
	if r == nil {
		return nil
	}
	c := *r
	c.exec.env = append(slices.Clip(r.exec.env), env...)
	return &c
}

// list returns the handlers for event in dispatch order.
func (r *Runner) list(event string) []*handler {
	if r == nil {
		return nil
	}
	var hs []*handler
	for _, h := range r.handlers {
		if h.handles(event) {
			hs = append(hs, h)
		}
	}
	return hs
}

// call is how one handler is run on one event.
type call[R any] struct {
	// goFn makes an in-process handler's copy of the event and returns
	// the call of the handler on it, which returns its normalized result.
	// The copy is made before the handler runs on its own goroutine, so an
	// abandoned handler never reads the running event.
	goFn func() (func(context.Context) (*R, error), error)
	// input returns the event as a command's stdin.
	input func() ([]byte, error)
	// decode reads a command's stdout; nil means stdout is ignored.
	decode func([]byte) (*R, error)
}

// invoke runs h and returns its result (nil for none) or a report naming
// the event and the handler.
func invoke[R any](ctx context.Context, r *Runner, h *handler, event string, c call[R]) (*R, *Report) {
	res, rep := invokeUnnamed(ctx, r, h, event, c)
	if rep != nil {
		rep.Event, rep.Handler, rep.Source = event, h.name, h.source
	}
	return res, rep
}

func invokeUnnamed[R any](ctx context.Context, r *Runner, h *handler, event string, c call[R]) (*R, *Report) {
	if h.goh != nil {
		fn, err := c.goFn()
		if err != nil {
			return nil, &Report{Kind: Failed, Detail: "not run: its copy of the event could not be made: " + err.Error()}
		}
		return callGo(ctx, h.timeout, fn)
	}
	in, err := c.input()
	if err != nil {
		return nil, &Report{Kind: Failed, Detail: "not run: the event could not be written as JSON: " + err.Error()}
	}
	out, rep := h.cmd.run(ctx, event, h.timeout, in, &r.exec)
	if rep != nil || c.decode == nil {
		return nil, rep
	}
	res, err := c.decode(out)
	if err != nil {
		return nil, &Report{Kind: Invalid, Detail: fmt.Sprintf("its output is not a valid result (%v), so it was ignored; output: %s", err, excerpt(out))}
	}
	return res, nil
}

// excerpt quotes the start of a command's output for a report.
func excerpt(out []byte) string {
	const max = 200
	s := strings.TrimSpace(strings.ToValidUTF8(string(out), "�"))
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}

// goResult copies the event for an in-process before-handler and returns
// its call, which normalizes the handler's result.
func goResult[E any, R any, P interface {
	*R
	json.MarshalerTo
	json.UnmarshalerFrom
}](copyEvent func() (E, error), fn func(context.Context, E) (P, error)) func() (func(context.Context) (*R, error), error) {
	return func() (func(context.Context) (*R, error), error) {
		ev, err := copyEvent()
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*R, error) {
			res, err := fn(ctx, ev)
			if err != nil {
				return nil, err
			}
			n, err := normalize[R, P](res)
			if err != nil {
				return nil, &invalidResultError{err}
			}
			return n, nil
		}, nil
	}
}

// lazyJSON encodes an event once, on first use.
type lazyJSON struct {
	ev  json.MarshalerTo
	b   []byte
	err error
}

func (l *lazyJSON) get() ([]byte, error) {
	if l.b == nil && l.err == nil {
		l.b, l.err = encodeEvent(l.ev)
	}
	return l.b, l.err
}

// reset forgets the encoding after the event changed.
func (l *lazyJSON) reset() { l.b, l.err = nil, nil }

// CompactDecision is what session_before_compact's handlers decided.
type CompactDecision struct {
	// Cancelled means stop: write nothing. CancelledBy names the handler.
	Cancelled   bool
	CancelledBy string
	// Preparation is the preparation to compact: the caller's, with the
	// message arrays the handlers substituted. It is a new value; the
	// caller's preparation is never changed.
	Preparation *compaction.Preparation
	// TransformedBy names the handlers that substituted message arrays,
	// in order.
	TransformedBy []string
	// Compaction, when not nil, is the entry to append instead of running
	// Prime's summarizer: a handler's summary, fromHook true, with the
	// event's custom instructions. CompactionBy names the handler.
	Compaction   *session.CompactionEntry
	CompactionBy string
	// Reports lists the handlers that failed or answered invalidly.
	Reports []Report
}

// BeforeCompact dispatches session_before_compact and folds the results:
//
//   - cancel stops at once: later handlers do not run, nothing is written;
//   - a preparation change replaces the arrays it sets, and later
//     handlers (and Prime's summarizer) see the new arrays, and the
//     event's Transcript (when set) made again from them with the same
//     options; every other preparation field is kept as prepared;
//   - a valid compaction becomes the summary to store; a later handler's
//     valid compaction replaces it, but an answer without one (or an
//     empty object) does not erase it;
//   - an invalid answer is reported and ignored whole.
//
// It returns an error only when ctx is done (the decision then holds the
// reports so far, and the compaction must be treated as aborted) or, with
// a nil decision, when ev has no preparation.
func (r *Runner) BeforeCompact(ctx context.Context, ev *BeforeCompactEvent) (*CompactDecision, error) {
	if ev.Preparation == nil {
		return nil, errors.New("session_before_compact needs a preparation")
	}
	running := *ev
	prep := *ev.Preparation
	running.Preparation = &prep
	d := &CompactDecision{Preparation: &prep}
	var onPath map[string]bool
	var err error
	d.Reports, err = fold(ctx, r, EventBeforeCompact, &running,
		func(h *Hooks) func(context.Context, *BeforeCompactEvent) (*BeforeCompactResult, error) {
			return h.BeforeCompact
		},
		func(h *handler, res *BeforeCompactResult) (s step) {
			if c := res.Compaction; c != nil {
				if onPath == nil {
					onPath = make(map[string]bool, len(ev.BranchEntries))
					for _, e := range ev.BranchEntries {
						onPath[e.ID] = true
					}
				}
				if err := c.check(onPath); err != nil {
					return step{invalid: "its compaction is not valid (" + err.Error() + "); its whole answer was ignored"}
				}
			}
			if res.Cancel {
				d.Cancelled, d.CancelledBy = true, h.name
				return step{stop: true}
			}
			if ch := res.Preparation; ch != nil && (ch.MessagesToSummarize != nil || ch.TurnPrefixMessages != nil) {
				next := *running.Preparation
				if ch.MessagesToSummarize != nil {
					next.MessagesToSummarize = ch.MessagesToSummarize
				}
				if ch.TurnPrefixMessages != nil {
					next.TurnPrefixMessages = ch.TurnPrefixMessages
				}
				running.Preparation, d.Preparation = &next, &next
				if t := running.Transcript; t != nil {
					running.Transcript = NewCompactTranscript(&next, t.Options)
				}
				d.TransformedBy = append(d.TransformedBy, h.name)
				s.changed = true
			}
			if c := res.Compaction; c != nil {
				d.Compaction = &session.CompactionEntry{
					Summary:            c.Summary,
					FirstKeptEntryID:   c.FirstKeptEntryID,
					TokensBefore:       c.TokensBefore,
					Details:            c.Details,
					FromHook:           true,
					CustomInstructions: strings.TrimSpace(ev.CustomInstructions),
					Usage:              c.Usage,
				}
				d.CompactionBy = h.name
			}
			return s
		})
	return d, err
}

// step is what folding one answer did to the running event.
type step struct {
	// invalid, when set, says why the answer was ignored whole.
	invalid string
	// stop ends the dispatch (cancel).
	stop bool
	// changed reports that later handlers get a different event.
	changed bool
}

// fold dispatches a before-event: each handler in turn gets the running
// event (a copy, for an in-process handler), and apply folds its answer in.
// It returns the reports, and ctx's error if ctx is done (the handler then
// running is not blamed for it).
func fold[E any, R any, P interface {
	*R
	json.MarshalerTo
	json.UnmarshalerFrom
}](
	ctx context.Context, r *Runner, event string, running cloner[*E],
	fn func(*Hooks) func(context.Context, *E) (P, error),
	apply func(*handler, *R) step,
) ([]Report, error) {
	var reports []Report
	in := &lazyJSON{ev: running}
	for _, h := range r.list(event) {
		if err := ctx.Err(); err != nil {
			return reports, err
		}
		res, rep := invoke(ctx, r, h, event, call[R]{
			goFn: goResult(running.clone, func(ctx context.Context, ev *E) (P, error) {
				return fn(h.goh)(ctx, ev)
			}),
			input:  in.get,
			decode: decodeResult[R, P],
		})
		if err := ctx.Err(); err != nil {
			return reports, err
		}
		if rep != nil {
			reports = append(reports, *rep)
			continue
		}
		if res == nil {
			continue
		}
		switch s := apply(h, res); {
		case s.invalid != "":
			reports = append(reports, Report{Kind: Invalid, Event: event, Handler: h.name, Source: h.source, Detail: s.invalid})
		case s.stop:
			return reports, nil
		case s.changed:
			in.reset()
		}
	}
	return reports, nil
}

// check reports why a custom compaction cannot be stored: an empty
// summary, or a first kept entry that is not on the current path (pi
// stores such an id and then keeps nothing).
func (c *CustomCompaction) check(onPath map[string]bool) error {
	var errs []string
	if strings.TrimSpace(c.Summary) == "" {
		errs = append(errs, "the summary is empty")
	}
	if !onPath[c.FirstKeptEntryID] {
		errs = append(errs, fmt.Sprintf("firstKeptEntryId %q is not an entry on the current path", c.FirstKeptEntryID))
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

// result is the decision as one handler's result, for composed Hooks.
func (d *CompactDecision) result() *BeforeCompactResult {
	res := &BeforeCompactResult{Cancel: d.Cancelled}
	if len(d.TransformedBy) > 0 {
		res.Preparation = &PreparationChange{
			MessagesToSummarize: d.Preparation.MessagesToSummarize,
			TurnPrefixMessages:  d.Preparation.TurnPrefixMessages,
		}
	}
	if c := d.Compaction; c != nil {
		res.Compaction = &CustomCompaction{Summary: c.Summary, FirstKeptEntryID: c.FirstKeptEntryID,
			TokensBefore: c.TokensBefore, Details: c.Details, Usage: c.Usage}
	}
	return res
}

// TreeDecision is what session_before_tree's handlers decided.
type TreeDecision struct {
	// Cancelled means the leaf does not move. CancelledBy names the
	// handler.
	Cancelled   bool
	CancelledBy string
	// Preparation is the caller's, with the handlers' overrides of
	// CustomInstructions, ReplaceInstructions and Label applied.
	Preparation TreePreparation
	// Summary, when not nil, is the branch summary to store instead of
	// Prime's (see [BranchSummary.Entry]). It is set only when the user
	// asked for a summary. SummaryBy names the handler.
	Summary   *BranchSummary
	SummaryBy string
	// Reports lists the handlers that failed or answered invalidly.
	Reports []Report
}

// BeforeTree dispatches session_before_tree and folds the results like
// [Runner.BeforeCompact]: cancel stops at once; an override that is set
// replaces the running value, which later handlers see; a valid summary
// replaces an earlier one and is used only when the user asked for a
// summary; an answer without a member leaves that member as it was. It
// returns an error only when ctx is done.
func (r *Runner) BeforeTree(ctx context.Context, ev *BeforeTreeEvent) (*TreeDecision, error) {
	running := *ev
	d := &TreeDecision{Preparation: ev.Preparation}
	var err error
	d.Reports, err = fold(ctx, r, EventBeforeTree, &running,
		func(h *Hooks) func(context.Context, *BeforeTreeEvent) (*BeforeTreeResult, error) { return h.BeforeTree },
		func(h *handler, res *BeforeTreeResult) step {
			if s := res.Summary; s != nil && strings.TrimSpace(s.Summary) == "" {
				return step{invalid: "its summary is empty; its whole answer was ignored"}
			}
			if res.Cancel {
				d.Cancelled, d.CancelledBy = true, h.name
				return step{stop: true}
			}
			p := &running.Preparation
			if res.CustomInstructions != nil {
				p.CustomInstructions = *res.CustomInstructions
			}
			if res.ReplaceInstructions != nil {
				p.ReplaceInstructions = *res.ReplaceInstructions
			}
			if res.Label != nil {
				p.Label = *res.Label
			}
			d.Preparation = *p
			if res.Summary != nil && p.UserWantsSummary {
				d.Summary, d.SummaryBy = res.Summary, h.name
			}
			return step{changed: res.CustomInstructions != nil || res.ReplaceInstructions != nil || res.Label != nil}
		})
	return d, err
}

// result is the decision as one handler's result, for composed Hooks.
func (d *TreeDecision) result() *BeforeTreeResult {
	p := d.Preparation
	return &BeforeTreeResult{Cancel: d.Cancelled, Summary: d.Summary,
		CustomInstructions: &p.CustomInstructions, ReplaceInstructions: &p.ReplaceInstructions, Label: &p.Label}
}

// Compact dispatches session_compact. Results are ignored; the reports
// list the handlers that failed. Handlers stop being called once ctx is
// done (pass context.WithoutCancel(ctx) to notify them regardless).
func (r *Runner) Compact(ctx context.Context, ev *CompactEvent) []Report {
	return notify(ctx, r, EventCompact, ev, func(h *Hooks) func(context.Context, *CompactEvent) error { return h.Compact })
}

// CompactFailed dispatches session_compact_failed, like [Runner.Compact].
func (r *Runner) CompactFailed(ctx context.Context, ev *CompactFailedEvent) []Report {
	return notify(ctx, r, EventCompactFailed, ev, func(h *Hooks) func(context.Context, *CompactFailedEvent) error { return h.CompactFailed })
}

// Tree dispatches session_tree, like [Runner.Compact].
func (r *Runner) Tree(ctx context.Context, ev *TreeEvent) []Report {
	return notify(ctx, r, EventTree, ev, func(h *Hooks) func(context.Context, *TreeEvent) error { return h.Tree })
}

// cloner is an event that can deep-copy itself for an in-process handler.
type cloner[P any] interface {
	json.MarshalerTo
	clone() (P, error)
}

// notify dispatches an after-event: every handler in order, results
// ignored.
func notify[P cloner[P]](ctx context.Context, r *Runner, event string, ev P, fn func(*Hooks) func(context.Context, P) error) []Report {
	var reports []Report
	in := &lazyJSON{ev: ev}
	for _, h := range r.list(event) {
		if ctx.Err() != nil {
			break
		}
		_, rep := invoke(ctx, r, h, event, call[struct{}]{
			goFn: func() (func(context.Context) (*struct{}, error), error) {
				c, err := ev.clone()
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context) (*struct{}, error) { return nil, fn(h.goh)(ctx, c) }, nil
			},
			input: in.get,
		})
		if rep != nil && ctx.Err() == nil {
			reports = append(reports, *rep)
		}
	}
	return reports
}

// clone returns a deep copy: the preparation through its JSON form (so an
// in-process handler sees exactly what a command does), the entries
// re-read from their bytes.
func (ev *BeforeCompactEvent) clone() (*BeforeCompactEvent, error) {
	c := *ev
	if ev.Preparation != nil {
		b, err := json.Marshal(ev.Preparation, encodeOptions)
		if err != nil {
			return nil, err
		}
		c.Preparation = new(compaction.Preparation)
		if err := json.Unmarshal(b, c.Preparation, jsonwire.ReadOptions); err != nil {
			return nil, err
		}
	}
	c.BranchEntries = cloneEntries(ev.BranchEntries)
	if ev.Transcript != nil {
		t := *ev.Transcript
		c.Transcript = &t
	}
	return &c, nil
}

func (ev *CompactEvent) clone() (*CompactEvent, error) {
	c := *ev
	c.CompactionEntry = cloneEntry(ev.CompactionEntry)
	return &c, nil
}

func (ev *CompactFailedEvent) clone() (*CompactFailedEvent, error) {
	c := *ev
	return &c, nil
}

func (ev *BeforeTreeEvent) clone() (*BeforeTreeEvent, error) {
	c := *ev
	c.Preparation.EntriesToSummarize = cloneEntries(ev.Preparation.EntriesToSummarize)
	if ev.Transcript != nil {
		t := *ev.Transcript
		c.Transcript = &t
	}
	return &c, nil
}

func (ev *TreeEvent) clone() (*TreeEvent, error) {
	c := *ev
	c.SummaryEntry = cloneEntry(ev.SummaryEntry)
	return &c, nil
}

func cloneEntries(es []*session.Entry) []*session.Entry {
	if es == nil {
		return nil
	}
	out := make([]*session.Entry, len(es))
	for i, e := range es {
		out[i] = cloneEntry(e)
	}
	return out
}

// cloneEntry copies an entry and its bytes.
func cloneEntry(e *session.Entry) *session.Entry {
	if e == nil {
		return nil
	}
	line, err := e.Raw()
	if err != nil { // an entry that cannot be read: nothing to protect
		return e
	}
	c, err := session.NewEntry(line)
	if err != nil { // an entry not made from a line: nothing shared to protect
		return e
	}
	c.Line = e.Line
	return c
}
