package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// compactCommands are the commands that compact a session and move in its
// tree.
func compactCommands() []*command {
	return []*command{
		{
			name:    "compact",
			usage:   "FILE [--dry-run] [--json] [--instructions TEXT] [--keep-recent-tokens N] [--reserve-tokens N] [--context-window N] [--leaf ID] [--model PROVIDER/ID | --offline] [--no-hooks] [--cwd DIR]",
			summary: "summarize the old part of a session's conversation; one compaction entry is appended",
			run:     runCompact,
		},
		{
			name:    "branch",
			usage:   "FILE --to ID [--from ID] [--summarize] [--instructions TEXT] [--label TEXT] [--dry-run] [--json] [--context-window N] [--model PROVIDER/ID | --offline] [--no-hooks] [--cwd DIR]",
			summary: "move to another point of the session tree, appending a summary of the branch left (--summarize)",
			run:     runBranch,
		},
		{
			name:    "dev bench-compact",
			usage:   "FILE [--runs N] [--json]",
			summary: "time 'prime compact --dry-run' and '--offline' on a session (on a copy); peak memory",
			run:     runBenchCompact,
		},
	}
}

// summaryFlags are the flags shared by compact and branch.
type summaryFlags struct {
	dryRun        bool
	asJSON        bool
	instructions  string
	model         string
	offline       bool
	contextWindow int
	noHooks       bool
	settings      settingsFlags
}

func (f *summaryFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.dryRun, "dry-run", false, "decide and report; ask no model, run no hooks, write nothing")
	fs.BoolVar(&f.noHooks, "no-hooks", false, "run none of the command hooks declared in settings")
	f.settings.register(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.StringVar(&f.instructions, "instructions", "", "focus for the summary, passed to the model with high priority")
	fs.StringVar(&f.model, "model", "", "the summarizer model, `PROVIDER/ID` (default: compaction.model, else the session's model)")
	fs.BoolVar(&f.offline, "offline", false, "no model: build the summary by code")
	fs.IntVar(&f.contextWindow, "context-window", 0, "assume a context window of `N` tokens for the models involved")
}

// choice validates the summarizer flags.
func (f *summaryFlags) choice(fs *flag.FlagSet) (agent.SummarizerChoice, error) {
	if f.model != "" && f.offline {
		return agent.SummarizerChoice{}, usageErrorf("--model and --offline exclude each other")
	}
	if set(fs, "context-window") && f.contextWindow <= 0 {
		return agent.SummarizerChoice{}, usageErrorf("--context-window must be a positive number of tokens")
	}
	return agent.SummarizerChoice{Model: f.model, Offline: f.offline, ContextWindow: f.contextWindow}, nil
}

// set reports whether the flag was given on the command line.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// newAgent loads the settings (overrides applied as flags), builds the hook
// runner for the command's events (saying which hooks it skips) and loads
// the session at path, read-only for a dry run. It returns an agent
// reporting progress to p.
func newAgent(ctx context.Context, a *app, name, path string, f *summaryFlags, events []string, overrides map[string]int, p *progress) (*agent.Agent, *hook.Runner, error) {
	st, err := loadSettings(ctx, a, f.settings)
	if err != nil {
		return nil, nil, err
	}
	warnProblems(a, name, st)
	for key, v := range overrides {
		if st, err = st.WithOverride(key, strconv.Itoa(v)); err != nil {
			return nil, nil, usageErrorf("%v", err)
		}
	}
	hooks := hook.New(st, hook.Options{Disabled: f.noHooks})
	printSkipped(a, name, st, hooks, events)
	open := agent.Open
	if f.dryRun {
		open = agent.Load
	}
	ag, err := open(path, agent.Config{Settings: st, Getenv: a.getenv, Events: p.event, Hooks: hooks})
	if err != nil {
		return nil, nil, sessionFileErr(err)
	}
	printWarnings(a, ag.Session())
	return ag, hooks, nil
}

// operationError gives an agent error its exit status and, for a model
// that cannot be used, says what to do about it.
func operationError(err error) error {
	var me *agent.ModelError
	switch {
	case errors.Is(err, agent.ErrHookCancelled):
		// The user's own hook said no: the operation failed, it was not
		// interrupted.
		return err
	case errors.Is(err, agent.ErrCancelled):
		return &exitError{code: exitInterrupted, err: err}
	case errors.Is(err, session.ErrNotFound):
		return badInput(err)
	case errors.As(err, &me):
		err = fmt.Errorf("%w\n  pass --model PROVIDER/ID for another model, set the provider's API key, or use --offline to build the summary by code", err)
		if me.Source == agent.SourceRequest && errors.Is(me, registry.ErrUnknownModel) {
			return badInput(err)
		}
	}
	return err
}

// compactDryRunJSON is "prime compact --dry-run --json": the preparation
// under pi's names, with counts for the message arrays.
type compactDryRunJSON struct {
	FirstKeptEntryID    string   `json:"firstKeptEntryId"`
	IsSplitTurn         bool     `json:"isSplitTurn"`
	MessagesToSummarize int      `json:"messagesToSummarize"`
	TurnPrefixMessages  int      `json:"turnPrefixMessages"`
	TokensBefore        int      `json:"tokensBefore"`
	PreviousSummary     bool     `json:"previousSummary"`
	ReadFiles           []string `json:"readFiles"`
	ModifiedFiles       []string `json:"modifiedFiles"`
}

// notCompactableJSON is printed, by dry and real runs alike, when there is
// nothing to compact: an outcome, not a failure (exit status 0).
type notCompactableJSON struct {
	Compactable bool   `json:"compactable"`
	Reason      string `json:"reason"`
}

// compactJSON is "prime compact --json" after a compaction was written.
type compactJSON struct {
	EntryID          string         `json:"entryId"`
	ParentID         string         `json:"parentId"`
	Reason           agent.Reason   `json:"reason"`
	Summary          string         `json:"summary"`
	TokensBefore     int            `json:"tokensBefore"`
	TokensAfter      int            `json:"tokensAfter"`
	FirstKeptEntryID string         `json:"firstKeptEntryId"`
	Details          jsontext.Value `json:"details"`
	Usage            *llm.Usage     `json:"usage"`
	// Model is the summarizer ("provider/id"), null when offline.
	Model               *string `json:"model"`
	Deterministic       bool    `json:"deterministic"`
	DeterministicReason string  `json:"deterministicReason,omitzero"`
	CustomInstructions  string  `json:"customInstructions,omitzero"`
	Migrated            bool    `json:"migrated,omitzero"`
	// FromHook reports that a session_before_compact hook wrote the
	// summary (Hook names it; Model is then null); TransformedBy names the
	// hooks that replaced the messages Prime summarized.
	FromHook      bool     `json:"fromHook"`
	Hook          string   `json:"hook,omitzero"`
	TransformedBy []string `json:"transformedBy,omitzero"`
	// HookReports lists the hooks skipped, failed, timed out or answered
	// invalidly during the run.
	HookReports []hook.Report `json:"hookReports"`
}

// compactHookEvents are the events "prime compact" dispatches.
var compactHookEvents = []string{hook.EventBeforeCompact, hook.EventCompact, hook.EventCompactFailed}

func runCompact(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	var f summaryFlags
	f.register(fs)
	keep := fs.Int("keep-recent-tokens", 0, "keep about `N` recent tokens verbatim (compaction.keepRecentTokens)")
	reserve := fs.Int("reserve-tokens", 0, "tokens kept free for the reply; the summary may use 80% (compaction.reserveTokens)")
	leaf := fs.String("leaf", "", "compact the conversation ending at entry `ID` (default: the file's leaf)")
	path, err := oneFile(fs, args)
	if err != nil {
		return err
	}
	choice, err := f.choice(fs)
	if err != nil {
		return err
	}
	overrides := map[string]int{}
	for name, key := range map[string]string{"keep-recent-tokens": "compaction.keepRecentTokens", "reserve-tokens": "compaction.reserveTokens"} {
		if set(fs, name) {
			v := *keep
			if name == "reserve-tokens" {
				v = *reserve
			}
			if v < 0 {
				return usageErrorf("--%s must not be negative", name)
			}
			overrides[key] = v
		}
	}
	p := newProgress(a)
	defer p.close()
	ag, hooks, err := newAgent(ctx, a, "compact", path, &f, compactHookEvents, overrides, p)
	if err != nil {
		return err
	}
	defer ag.Close()
	req := agent.CompactRequest{Reason: agent.ReasonManual, LeafID: *leaf, Instructions: f.instructions, Summarizer: choice,
		ExactKeepRecent: set(fs, "keep-recent-tokens")}
	plan, err := ag.PlanCompaction(ctx, req)
	var nc *compaction.NotCompactableError
	if errors.As(err, &nc) {
		if f.asJSON {
			return writeJSON(a.stdout, notCompactableJSON{Reason: err.Error()})
		}
		_, err = fmt.Fprintln(a.stdout, err)
		return err
	}
	if err != nil {
		return operationError(err)
	}
	if f.dryRun {
		return printCompactPlan(a, path, plan, hooks, f.asJSON)
	}
	res, err := ag.RunCompaction(ctx, plan)
	p.close()
	if err != nil {
		return operationError(err)
	}
	return printCompaction(a, path, res, p.hookReports(), f.asJSON)
}

func printCompactPlan(a *app, path string, plan *agent.CompactionPlan, hooks *hook.Runner, asJSON bool) error {
	prep := plan.Preparation
	if asJSON {
		return writeJSON(a.stdout, compactDryRunJSON{
			FirstKeptEntryID: prep.FirstKeptEntryID, IsSplitTurn: prep.IsSplitTurn,
			MessagesToSummarize: len(prep.MessagesToSummarize), TurnPrefixMessages: len(prep.TurnPrefixMessages),
			TokensBefore: prep.TokensBefore, PreviousSummary: prep.PreviousSummary != "",
			ReadFiles: nonNil(prep.ReadFiles()), ModifiedFiles: nonNil(prep.ModifiedFiles()),
		})
	}
	w := a.stdout
	fmt.Fprintf(w, "compaction of %s at %s (dry run: nothing written)\n", path, plan.LeafID)
	fmt.Fprintf(w, "  summarize:        %d messages", len(prep.MessagesToSummarize))
	if prep.IsSplitTurn {
		fmt.Fprintf(w, ", and the first %d of the turn the cut splits", len(prep.TurnPrefixMessages))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  keep from:        %s\n", prep.FirstKeptEntryID)
	fmt.Fprintf(w, "  previous summary: %s\n", yesNo(prep.PreviousSummary != ""))
	fmt.Fprintf(w, "  context:          %s tokens (window %s, %s; automatic compaction above %s: %s)\n",
		numfmt.Commas(prep.TokensBefore), numfmt.Commas(plan.ContextWindow), windowSource(plan.ContextWindowSource),
		numfmt.Commas(plan.Threshold), yesNo(prep.TokensBefore > plan.Threshold))
	fmt.Fprintf(w, "  settings:         keepRecentTokens %s, reserveTokens %s\n",
		numfmt.Commas(prep.Settings.KeepRecentTokens), numfmt.Commas(prep.Settings.ReserveTokens))
	fmt.Fprintf(w, "  files:            %d read, %d modified\n", len(prep.ReadFiles()), len(prep.ModifiedFiles()))
	fmt.Fprintf(w, "  summarizer:       %s\n", describeSummarizer(&plan.Summarizer))
	fmt.Fprintf(w, "  hooks:            %s\n", describeHooks(hooks, compactHookEvents))
	return nil
}

func printCompaction(a *app, path string, res *agent.CompactionResult, reports []hook.Report, asJSON bool) error {
	out := res.Compaction
	if asJSON {
		j := compactJSON{
			EntryID: res.Entry.ID, ParentID: res.Entry.ParentID, Reason: res.Plan.Reason, Summary: out.Summary,
			TokensBefore: res.TokensBefore, TokensAfter: res.TokensAfter, FirstKeptEntryID: out.FirstKeptEntryID,
			Details: out.Details, Usage: out.Usage, Deterministic: out.Deterministic, DeterministicReason: out.FallbackReason,
			CustomInstructions: out.CustomInstructions, Migrated: res.Migrated,
			FromHook: res.FromHook, Hook: res.Hook, TransformedBy: res.TransformedBy, HookReports: reports,
		}
		if !res.Plan.Summarizer.Offline() && !res.FromHook {
			j.Model = &res.Plan.Summarizer.Ref
		}
		return writeJSON(a.stdout, j)
	}
	w := a.stdout
	fmt.Fprintln(w, strings.TrimRight(out.Summary, "\n"))
	fmt.Fprintln(w)
	if res.Migrated {
		fmt.Fprintf(w, "%s was in an older format version: rewritten as version 3 to append (the original is %s.bak)\n", path, path)
	}
	fmt.Fprintf(w, "compaction %s appended to %s after %s\n", res.Entry.ID, path, res.Entry.ParentID)
	fmt.Fprintf(w, "context: %s tokens before, %s after (kept from %s)\n", numfmt.Commas(res.TokensBefore), numfmt.Commas(res.TokensAfter), out.FirstKeptEntryID)
	printSummaryOrigin(w, &res.Plan.Summarizer, res.Hook, out.Deterministic, out.FallbackReason, out.Usage)
	printLedgerCheck(w, out.LedgerCheck)
	if len(res.TransformedBy) > 0 {
		fmt.Fprintf(w, "messages summarized as replaced by %s\n", hookNames(res.TransformedBy))
	}
	return nil
}

// printSummaryOrigin says who wrote a summary (a hook, code, or a model)
// and what it cost.
func printSummaryOrigin(w io.Writer, sum *agent.Summarizer, byHook string, deterministic bool, why string, usage *llm.Usage) {
	switch {
	case byHook != "":
		fmt.Fprintf(w, "summary by hook %q\n", byHook)
	case deterministic:
		fmt.Fprintf(w, "summary built by code: %s\n", why)
	default:
		fmt.Fprintf(w, "summary by %s\n", sum.Ref)
	}
	if usage != nil {
		cost := ""
		if usage.Cost.Total > 0 {
			cost = fmt.Sprintf(", $%.4f", usage.Cost.Total)
		}
		fmt.Fprintf(w, "usage: %s input, %s output tokens%s\n", numfmt.Commas(usage.Input+usage.CacheRead+usage.CacheWrite), numfmt.Commas(usage.Output), cost)
	}
}

// describeSummarizer says which model would write a summary, or why none
// can.
func describeSummarizer(s *agent.Summarizer) string {
	switch {
	case s.Offline():
		return "none (--offline): the summary is built by code"
	case s.Err != nil:
		return "unavailable: " + s.Err.Error()
	}
	from := map[string]string{
		agent.SourceRequest: "--model", agent.SourceSettings: "compaction.model", agent.SourceSession: "the session's model",
	}[s.Source]
	return fmt.Sprintf("%s (%s; window %s)", s.Ref, from, numfmt.Commas(s.Model.ContextWindow))
}

func windowSource(src string) string {
	switch src {
	case agent.SourceRequest:
		return "--context-window"
	case agent.SourceSession:
		return "the session's model"
	case agent.SourceModel:
		return "the summarizer's"
	}
	return "default: model unknown"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// progress shows on stderr what the summarizer is doing. On a terminal one
// status line is redrawn (a spinner, the step, the characters received);
// elsewhere each step is one plain line.
type progress struct {
	w   io.Writer
	tty bool

	mu     sync.Mutex
	status string
	chars  int
	frame  int
	shown  bool // a status line is on screen
	stop   chan struct{}
	done   chan struct{}
	closed bool
	// reports are the hook reports received, for --json.
	reports []hook.Report
}

// newProgress returns a progress display on a's stderr.
func newProgress(a *app) *progress {
	p := &progress{w: a.stderr}
	if f, ok := a.stderr.(*os.File); ok && a.getenv("TERM") != "dumb" {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// event shows one agent event.
func (p *progress) event(ev agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	switch e := ev.(type) {
	case agent.CompactionStart:
		p.start(agent.OpCompaction, e.Summarizer)
	case agent.BranchSummaryStart:
		p.start(agent.OpBranchSummary, e.Summarizer)
	case agent.CompactionEnd, agent.BranchSummaryEnd:
		p.flushChars()
		p.clear()
	case *agent.Progress:
		p.progress(e)
	}
}

// start shows that an operation began.
func (p *progress) start(op agent.Op, summarizer string) {
	who := "code (no model)"
	if summarizer != "" {
		who = summarizer
	}
	p.setStatus(fmt.Sprintf("%s by %s", op, who))
	if p.tty && p.stop == nil {
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.animate()
	}
}

// progress shows a step of an operation.
func (p *progress) progress(e *agent.Progress) {
	switch e.Kind {
	case agent.ProgressRequest:
		step := "summarizing " + phaseWords(e.Phase)
		if e.Part > 1 {
			step += fmt.Sprintf(", part %d", e.Part)
		}
		if e.Attempt > 0 {
			step += fmt.Sprintf(", smaller retry %d", e.Attempt)
		}
		p.flushChars()
		p.setStatus(step)
	case agent.ProgressText:
		p.chars += len(e.Delta)
	case agent.ProgressRetry:
		p.line(fmt.Sprintf("the provider failed (%v); retrying in %s (retry %d)", e.Err, e.Delay.Round(100*time.Millisecond), e.Attempt))
	case agent.ProgressOverflowRetry:
		p.flushChars() // the failed answer's count comes before what follows it
		if errors.Is(e.Err, compaction.ErrContextFilled) {
			p.line("the model's context window filled up before the summary was finished; sending a smaller request")
		} else {
			p.line("the request did not fit the model's context window; sending a smaller one")
		}
	case agent.ProgressFallback:
		p.flushChars()
		if e.Phase != compaction.PhaseDeterministic { // offline: the start said so
			p.line("no model summary: " + e.Message + "; building it by code")
		}
	case agent.ProgressHooks:
		p.setStatus(fmt.Sprintf("%s: running %s", e.HookEvent, hookNames(e.Handlers)))
	case agent.ProgressHookReport:
		p.reports = append(p.reports, *e.HookReport)
		if e.HookReport.Kind != hook.Skipped { // listed before the start
			p.line(e.HookReport.Error())
		}
	}
}

// hookReports returns the hook reports received.
func (p *progress) hookReports() []hook.Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]hook.Report{}, p.reports...)
}

// flushChars ends a request's count of characters received, printing it
// where the status line does not show it.
func (p *progress) flushChars() {
	if !p.tty && p.chars > 0 {
		p.line(fmt.Sprintf("received %s characters", numfmt.Commas(p.chars)))
	}
	p.chars = 0
}

func phaseWords(ph compaction.Phase) string {
	switch ph {
	case compaction.PhaseTurnPrefix:
		return "the start of the split turn"
	case compaction.PhaseBranch:
		return "the branch"
	}
	return "the history"
}

// setStatus changes the status: redrawn on a terminal, a line elsewhere.
func (p *progress) setStatus(s string) {
	p.status = s
	if p.tty {
		p.draw()
	} else {
		fmt.Fprintln(p.w, s+"…")
	}
}

// line prints a line of its own, above the status line on a terminal.
func (p *progress) line(s string) {
	if p.tty {
		p.clear()
		fmt.Fprintln(p.w, s)
		p.draw()
		return
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) draw() {
	if p.status == "" {
		return
	}
	text := spinner[p.frame%len(spinner)] + " " + p.status + "…"
	if p.chars > 0 {
		text += fmt.Sprintf(" %s characters", numfmt.Commas(p.chars))
	}
	fmt.Fprint(p.w, "\r\x1b[K"+text)
	p.shown = true
}

func (p *progress) clear() {
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func (p *progress) animate() {
	defer close(p.done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.shown {
				p.frame++
				p.draw()
			}
			p.mu.Unlock()
		}
	}
}

// close stops the display and clears the status line.
func (p *progress) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.clear()
	stop, done := p.stop, p.done
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// benchCompactJSON is the output of "prime dev bench-compact --json"; times
// are the best of the runs, in nanoseconds. PeakRSSDryRunBytes is the
// process's peak after the dry runs, PeakRSSBytes after everything.
type benchCompactJSON struct {
	File               string `json:"file"`
	Bytes              int64  `json:"bytes"`
	Entries            int    `json:"entries"`
	DryRunNs           int64  `json:"dryRunNs"`
	OfflineNs          int64  `json:"offlineNs"`
	TokensBefore       int    `json:"tokensBefore"`
	TokensAfter        int    `json:"tokensAfter"`
	PeakRSSDryRunBytes int64  `json:"peakRssDryRunBytes"`
	PeakRSSBytes       int64  `json:"peakRssBytes"`
}

// runBenchCompact times what "prime compact FILE --dry-run" and
// "prime compact FILE --offline" do, with the settings' defaults: the dry run
// loads and plans; the offline run opens a fresh copy of FILE for appending,
// plans, builds the summary by code and appends it. FILE is never written.
func runBenchCompact(ctx context.Context, a *app, args []string) error {
	path, runs, asJSON, err := benchArgs(flag.NewFlagSet("dev bench-compact", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return sessionFileErr(err)
	}
	tmp, err := os.MkdirTemp("", "prime-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cfg := agent.Config{Settings: settings.Defaults(), AgentDir: tmp, Getenv: func(string) string { return "" }}
	offline := agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}}
	out := benchCompactJSON{File: path, Bytes: int64(len(data))}
	for range runs {
		runtime.GC()
		t := time.Now()
		ag, err := agent.Load(path, cfg)
		if err != nil {
			return sessionFileErr(err)
		}
		plan, err := ag.PlanCompaction(ctx, offline)
		if err != nil {
			return err
		}
		best(&out.DryRunNs, time.Since(t))
		out.Entries, out.TokensBefore = ag.Session().Len(), plan.Preparation.TokensBefore
	}
	out.PeakRSSDryRunBytes = peakRSS()
	dst := filepath.Join(tmp, "copy.jsonl")
	for range runs {
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return err
		}
		runtime.GC()
		t := time.Now()
		ag, err := agent.Open(dst, cfg)
		if err != nil {
			return err
		}
		res, err := ag.Compact(ctx, offline)
		ag.Close()
		if err != nil {
			return err
		}
		best(&out.OfflineNs, time.Since(t))
		out.TokensAfter = res.TokensAfter
	}
	out.PeakRSSBytes = peakRSS()
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	w := a.stdout
	fmt.Fprintf(w, "%s: %.1f MB, %d entries (best of %d runs)\n", path, float64(out.Bytes)/1e6, out.Entries, runs)
	fmt.Fprintf(w, "compact --dry-run  %10s  (load, settings, summarizer, prepare; %s tokens before)\n", time.Duration(out.DryRunNs), numfmt.Commas(out.TokensBefore))
	fmt.Fprintf(w, "compact --offline  %10s  (open, prepare, summary by code, append; %s tokens after)\n", time.Duration(out.OfflineNs), numfmt.Commas(out.TokensAfter))
	if out.PeakRSSBytes > 0 {
		fmt.Fprintf(w, "peak RSS  %7.1f MB after the dry runs, %.1f MB after all (whole process)\n", float64(out.PeakRSSDryRunBytes)/1e6, float64(out.PeakRSSBytes)/1e6)
	}
	return nil
}
