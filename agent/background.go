package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Background compaction: a compaction need not make the conversation wait
// for its summary. When the context passes a lower mark
// (compaction.backgroundThreshold, 80 % of the point where automatic
// compaction starts, by default) the agent plans the compaction there and
// has the summarizer write its summary on a goroutine of its own while the
// conversation goes on. When the context then crosses the threshold:
//
//   - the summary still fits the path when the leaf it was planned at and
//     its first kept entry are on the path and no compaction was made since;
//   - if a compaction planned now would keep from the same entry, or if the
//     background summary, with everything from its first kept entry on
//     kept word for word, brings the context below the mark, it is
//     appended at once: no model is asked, the conversation does not wait
//     (the kept part is then larger than keepRecentTokens by what was said
//     since: nothing is lost, the next compaction summarizes it);
//   - otherwise it is brought up to date: one update request summarizes
//     only what lies between its cut and the cut planned now, with the
//     background summary as the previous summary; the entry is what a
//     blocking compaction writes now (same kept range);
//   - a summary still being written is waited for (it started earlier
//     than a new one would); one that failed, was built by code after the
//     model failed, or no longer fits the path is dropped, and the
//     compaction is made as without it.
//
// A background summary is never written to the file by itself; one that
// fails, is cancelled or is overtaken costs its tokens and nothing else, and
// is reported (BackgroundCompaction events, told on the run's goroutine at
// its next check, like every other event of the run, or by Abort).
//
// The agent owns the job, not the run that started it: the run often ends
// (AgentSettled) right after the check that started it, and the time the
// user spends reading and typing is when background work is free, so it
// goes on between prompts. Abort (Escape) cancels it while it is being
// written, and with it everything that aborts first: a manual compaction, a
// navigation, undoing a compaction, a new or switched session, and Close,
// which ends a print or RPC run; the goroutine is waited for, so none
// outlives the agent. A summary already written is kept until it is used
// or found not to fit. No background
// summary is made when a session_before_compact hook is declared (the hook
// decides what a compaction holds, when it happens), when the summarizer
// cannot be used, or with compaction.background false. Only compactions at
// the threshold use it: an overflow recovery compacts as before.

// BackgroundKind says what a BackgroundCompaction event reports.
type BackgroundKind string

// Kinds of background compaction events.
const (
	// BackgroundStarted: the summary is being written (LeafID: where it
	// was planned; FirstKeptEntryID: its cut).
	BackgroundStarted BackgroundKind = "started"
	// BackgroundReady: the summary is written (Usage: its cost).
	BackgroundReady BackgroundKind = "ready"
	// BackgroundFailed: the summarizer failed (Err); nothing is written.
	BackgroundFailed BackgroundKind = "failed"
	// BackgroundCancelled: Abort or the end of the run stopped it.
	BackgroundCancelled BackgroundKind = "cancelled"
	// BackgroundOvertaken: it no longer fits the path (Why); dropped.
	BackgroundOvertaken BackgroundKind = "overtaken"
	// BackgroundUsed: the threshold was crossed and it was appended at
	// once; BackgroundUpdated: it was first brought up to date.
	BackgroundUsed    BackgroundKind = "used"
	BackgroundUpdated BackgroundKind = "updated"
)

// BackgroundCompaction reports what a summary written in the background
// became.
type BackgroundCompaction struct {
	Kind BackgroundKind
	// LeafID is the leaf it was planned at, FirstKeptEntryID its cut.
	LeafID, FirstKeptEntryID string
	// Summarizer is the model writing it ("provider/id").
	Summarizer string
	// Usage is what its requests cost, once known.
	Usage *llm.Usage
	// Err is why it failed; Why why it was overtaken.
	Err error
	Why string
}

// EventType names the event.
func (BackgroundCompaction) EventType() string { return "background_compaction" }

// backgroundJob is a summary written in the background. Its fields but
// plan, cancel and done are set by its goroutine before done is closed.
type backgroundJob struct {
	plan      *CompactionPlan
	sessionID string
	cancel    context.CancelFunc
	done      chan struct{}
	started   time.Time

	result   *compaction.Result
	err      error
	duration time.Duration
	// reported is set once its outcome was told (guarded by Agent.mu).
	reported bool
}

// finished reports whether the job's goroutine is done.
func (j *backgroundJob) finished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// backgroundUse is how RunCompaction uses a background summary.
type backgroundUse struct {
	// result is appended as it is; nil when an update request is made.
	result    *compaction.Result
	updated   bool
	plannedAt string
	duration  time.Duration
	// messages counts the messages the background summary covered.
	messages int
	// waitStart is when the threshold was crossed: the wait the receipt
	// records runs from there.
	waitStart time.Time
}

// ready returns the summary to append as it is, or nil.
func (u *backgroundUse) ready() *compaction.Result {
	if u == nil {
		return nil
	}
	return u.result
}

// event makes the job's event of kind k.
func (j *backgroundJob) event(k BackgroundKind) BackgroundCompaction {
	e := BackgroundCompaction{Kind: k, LeafID: j.plan.LeafID, FirstKeptEntryID: j.plan.Preparation.FirstKeptEntryID, Summarizer: j.plan.Summarizer.Ref}
	if j.result != nil {
		e.Usage = j.result.Usage
	}
	return e
}

// backgroundMark is where the background summary starts for a context of a
// window compacted with s, and whether it is on.
func (a *Agent) backgroundMark(window int, s compaction.Settings) (int, bool) {
	bs := a.settings().Background()
	return compaction.BackgroundMark(window, bs.Percent, s), bs.Enabled
}

// maybeStartBackground starts a background summary when the context
// (tokens) has passed the mark and none is being written or waiting. It
// runs on the run's goroutine, from the threshold check; ctx is the run's.
func (a *Agent) maybeStartBackground(ctx context.Context, tokens int, model *llm.Model, s compaction.Settings) {
	a.reportBackground()
	mark, on := a.backgroundMark(model.ContextWindow, s)
	if !on || tokens <= mark || a.cfg.Hooks.Handles(hook.EventBeforeCompact) {
		return
	}
	a.mu.Lock()
	job := a.conv.background
	a.mu.Unlock()
	if job != nil {
		why := a.overtaken(job, nil)
		if why == "" {
			return // being written, or waiting for the threshold
		}
		a.dropBackground(job, why)
	}
	plan, err := a.PlanCompaction(ctx, CompactRequest{Reason: ReasonThreshold})
	if err != nil || plan.Summarizer.Err != nil || plan.Summarizer.Offline() {
		return // nothing to compact yet, or no model: the threshold will say
	}
	a.readPath(plan) // to see later whether the conversation moved on
	p, m, err := provider(ctx, plan.reg, &plan.Summarizer)
	if err != nil {
		return
	}
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx)) // outlives the run: see above
	job = &backgroundJob{plan: plan, cancel: cancel, done: make(chan struct{}), started: time.Now()}
	a.mu.Lock()
	if h := a.s.Header(); h != nil {
		job.sessionID = h.ID
	}
	a.conv.background = job
	a.mu.Unlock()
	a.emit(job.event(BackgroundStarted))
	go func() {
		defer close(job.done)
		job.result, job.err = compaction.Compact(jctx, plan.Preparation, compaction.Options{
			Provider: p, Model: m, ThinkingLevel: plan.ThinkingLevel,
		})
		job.duration = time.Since(job.started)
		cancel()
	}()
}

// reportBackground tells the outcome of a job that finished since the last
// check, once.
func (a *Agent) reportBackground() {
	a.mu.Lock()
	job := a.conv.background
	report := job != nil && !job.reported && job.finished()
	if report {
		job.reported = true
	}
	if report && !job.usable() {
		a.conv.background = nil
	}
	a.mu.Unlock()
	if report {
		a.emit(job.outcome())
	}
}

// usable reports whether a finished job wrote a summary that may be used:
// one by the model (a summary code built after the model failed is not:
// the compaction at the threshold asks the model again).
func (j *backgroundJob) usable() bool { return j.err == nil && !j.result.Deterministic }

// outcome is the event of a finished job: ready, failed or cancelled.
func (j *backgroundJob) outcome() BackgroundCompaction {
	switch {
	case j.usable():
		return j.event(BackgroundReady)
	case j.err == nil:
		e := j.event(BackgroundFailed)
		e.Err = fmt.Errorf("the model could not write it: %s", j.result.FallbackReason)
		return e
	case errors.Is(j.err, context.Canceled), errors.Is(j.err, context.DeadlineExceeded):
		return j.event(BackgroundCancelled)
	}
	e := j.event(BackgroundFailed)
	e.Err = j.err
	return e
}

// cancelBackground stops a job still writing (Abort: Escape, a manual
// operation, a session switch, Close): it is cancelled, waited for, dropped
// and reported. A summary already written stays: whether it still fits the
// path is checked when it would be used.
func (a *Agent) cancelBackground() {
	a.mu.Lock()
	job := a.conv.background
	if job == nil || job.finished() {
		a.mu.Unlock()
		a.reportBackground()
		return
	}
	a.conv.background = nil
	job.reported = true
	a.mu.Unlock()
	job.cancel()
	<-job.done
	a.emit(job.event(BackgroundCancelled))
}

// dropBackground forgets a job that no longer fits the path, cancelling
// it if it still runs, and reports it.
func (a *Agent) dropBackground(job *backgroundJob, why string) {
	a.mu.Lock()
	if a.conv.background == job {
		a.conv.background = nil
	}
	a.mu.Unlock()
	job.cancel()
	<-job.done
	e := job.event(BackgroundOvertaken)
	e.Why = why
	a.emit(e)
}

// overtaken says why job no longer fits the path of fresh (a plan made now;
// nil: the current path), or "" when it still does.
func (a *Agent) overtaken(job *backgroundJob, fresh *CompactionPlan) string {
	var path []*session.Entry
	a.mu.Lock()
	id := ""
	if h := a.s.Header(); h != nil {
		id = h.ID
	}
	if fresh != nil {
		path = fresh.Path
	} else {
		path = a.s.LeafPath()
	}
	a.mu.Unlock()
	if id != job.sessionID {
		return "the agent works on another session"
	}
	on := make(map[string]bool, len(path))
	latest := ""
	for _, e := range path {
		on[e.ID] = true
		if e.Type == session.TypeCompaction {
			latest = e.ID
		}
	}
	planned := ""
	for _, e := range job.plan.Path {
		if e.Type == session.TypeCompaction {
			planned = e.ID
		}
	}
	switch {
	case !on[job.plan.LeafID]:
		return "the conversation moved to another branch"
	case latest != planned:
		return "the conversation was compacted since"
	case !on[job.plan.Preparation.FirstKeptEntryID]:
		return "its first kept entry is no longer on the path"
	}
	return ""
}

// useBackground turns the plan of a compaction at the threshold into one
// that uses the background summary, when there is one that fits (see
// above); else it returns fresh. It waits for a summary still being
// written, unless ctx is done first.
func (a *Agent) useBackground(ctx context.Context, fresh *CompactionPlan) *CompactionPlan {
	waitStart := time.Now()
	a.mu.Lock()
	job := a.conv.background
	a.mu.Unlock()
	if job == nil {
		return fresh
	}
	a.readPath(fresh)
	select {
	case <-job.done:
	case <-ctx.Done():
		a.cancelBackground()
		return fresh
	}
	a.mu.Lock()
	if a.conv.background == job {
		a.conv.background = nil
	}
	told := job.reported
	job.reported = true
	a.mu.Unlock()
	if !told {
		a.emit(job.outcome())
	}
	if !job.usable() {
		return fresh
	}
	if why := a.overtaken(job, fresh); why != "" {
		e := job.event(BackgroundOvertaken)
		e.Why = why
		a.emit(e)
		return fresh
	}
	jp := job.plan.Preparation
	use := &backgroundUse{plannedAt: job.plan.LeafID, duration: job.duration, waitStart: waitStart,
		messages: len(jp.MessagesToSummarize) + len(jp.TurnPrefixMessages)}
	plan := *fresh
	plan.background = use
	asIs := *job.result
	asIs.TokensBefore = fresh.Preparation.TokensBefore
	mark, _ := a.backgroundMark(fresh.ContextWindow, fresh.Preparation.Settings)
	if fresh.Preparation.FirstKeptEntryID == job.plan.Preparation.FirstKeptEntryID || a.tokensAfter(&plan, &asIs) <= mark {
		prep := *job.plan.Preparation
		prep.TokensBefore = fresh.Preparation.TokensBefore
		plan.Preparation, use.result = &prep, &asIs
		a.emit(job.event(BackgroundUsed))
		return &plan
	}
	prep, err := updatePreparation(job, fresh)
	if err != nil {
		e := job.event(BackgroundOvertaken)
		e.Why = err.Error()
		a.emit(e)
		return fresh
	}
	plan.Preparation, use.updated = prep, true
	a.emit(job.event(BackgroundUpdated))
	return &plan
}

// tokensAfter is the size of the context once out is appended as plan
// describes (chars/4 where no usage measures it), or math.MaxInt when the
// context cannot be built.
func (a *Agent) tokensAfter(plan *CompactionPlan, out *compaction.Result) int {
	c := out.Entry()
	c.SystemMessage = plan.system
	n, err := compaction.ContextAfter(a.readPath(plan), c)
	if err != nil {
		return math.MaxInt
	}
	return n
}

// updatePreparation is the preparation of the request that brings job's
// summary up to date at fresh (compaction.UpdatePreparation): fresh's path
// runs through the leaf job was planned at.
func updatePreparation(job *backgroundJob, fresh *CompactionPlan) (*compaction.Preparation, error) {
	n := len(job.plan.Path)
	if n == 0 || n > len(fresh.Path) || fresh.Path[n-1].ID != job.plan.LeafID {
		return nil, fmt.Errorf("the update cannot be prepared: the conversation does not run through %s", job.plan.LeafID)
	}
	c := job.result.Entry()
	c.SystemMessage = job.plan.system
	return compaction.UpdatePreparation(fresh.Path, n, c, fresh.Preparation)
}

// BackgroundStatus says what the background summary is doing, for a
// footer or a status line.
type BackgroundStatus struct {
	// Writing and Ready are exclusive; neither means there is none.
	Writing, Ready bool
	// LeafID is where it was planned, FirstKeptEntryID its cut, and
	// Started when it began.
	LeafID, FirstKeptEntryID string
	Started                  time.Time
}

// BackgroundSummary returns what the background summary is doing.
func (a *Agent) BackgroundSummary() BackgroundStatus {
	a.mu.Lock()
	job := a.conv.background
	a.mu.Unlock()
	if job == nil {
		return BackgroundStatus{}
	}
	st := BackgroundStatus{LeafID: job.plan.LeafID, FirstKeptEntryID: job.plan.Preparation.FirstKeptEntryID, Started: job.started}
	if job.finished() {
		if !job.usable() {
			return BackgroundStatus{}
		}
		st.Ready = true
		return st
	}
	st.Writing = true
	return st
}
