package compaction

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Options say who writes a summary and how.
type Options struct {
	// Provider is the summarizer. Nil means no model (offline): the
	// deterministic summarizer builds the summary by code.
	Provider llm.Provider
	// Model is the summarizer model: its context window bounds the request,
	// its output limit caps the answer, Reasoning enables ThinkingLevel.
	Model llm.Model
	// ThinkingLevel is the session's thinking level, passed as the reasoning
	// option when the model reasons and the level is not off.
	ThinkingLevel llm.ThinkingLevel
	// CustomInstructions are the user's instructions (/compact TEXT, or the
	// branch summary's custom prompt). They reach every request with high
	// priority and are stored on the compaction entry.
	CustomInstructions string
	// ReplaceInstructions makes CustomInstructions the whole task of a
	// branch summary request instead of an addition to Prime's (pi's
	// replaceInstructions). Compaction ignores it.
	ReplaceInstructions bool
	// ReserveTokens is branchSummary.reserveTokens for [SummarizeBranch]
	// (0 means the default); compaction uses the preparation's settings.
	ReserveTokens int
	// Progress, when set, is told what the summarizer is doing. It is
	// called on the caller's goroutine and must not block for long.
	Progress func(Progress)
}

// Phase names the part of the work a [Progress] report is about.
type Phase string

// The phases of a summary.
const (
	PhaseHistory       Phase = "history"       // summarizing the history before the kept part
	PhaseTurnPrefix    Phase = "turnPrefix"    // summarizing the first part of a split turn
	PhaseBranch        Phase = "branch"        // summarizing a branch being left
	PhaseDeterministic Phase = "deterministic" // building the summary by code
)

// ProgressKind says what a [Progress] report announces.
type ProgressKind int

// Kinds of progress report.
const (
	// ProgressRequest: a request goes to the model (Phase, Part, Attempt).
	ProgressRequest ProgressKind = iota
	// ProgressText: the model streamed Delta.
	ProgressText
	// ProgressRetry: the request did not fit the model's context window, or
	// the context filled before the summary was done ([ErrContextFilled]);
	// a smaller one follows (Err says what the provider answered).
	ProgressRetry
	// ProgressFallback: no model can write the summary (Reason, and Err when
	// a model failed); code builds it instead.
	ProgressFallback
	// ProgressRepeat: the answer failed after it had begun, or came back
	// empty (Err); the same request is sent once more before code builds
	// the summary.
	ProgressRepeat
)

// Progress reports what the summarizer is doing, for a command or user
// interface to show while the model works.
type Progress struct {
	Kind  ProgressKind
	Phase Phase
	// Part counts, from 1, the requests of a span folded over several
	// requests because it is larger than the summarizer's window.
	Part int
	// Attempt is 0 for a first request and 1 or 2 for the smaller retries
	// after a context overflow.
	Attempt int
	Delta   string
	Reason  string
	Err     error
}

// Errors for a model answer that cannot be stored. Compaction does not
// return them: it falls back to the deterministic summarizer and reports
// them in [Result].ModelError.
var (
	// ErrSummaryTruncated means the model hit the output limit before
	// finishing; a cut-off summary is never stored.
	ErrSummaryTruncated = errors.New("summary cut off at the output limit")
	// ErrEmptySummary means the model answered without any text.
	ErrEmptySummary = errors.New("summarizer answered with no text")
	// ErrContextFilled means the model stopped before finishing because its
	// context window was full, not because of the output limit: some
	// servers (llama.cpp's) take any prompt below their window and generate
	// until the context is full, reporting the same "length" stop as for
	// the output limit (see [llm.LengthStopOverflow]). Like an overflow, it
	// is retried smaller; a cut-off summary is never stored.
	ErrContextFilled = errors.New("the model's context window filled up before the summary was finished")
)

// MaxOverflowRetries is how many smaller requests follow a context-overflow
// answer before the model is given up on.
const MaxOverflowRetries = 2

// minTranscriptTokens is the least room for conversation that makes a
// request worth sending.
const minTranscriptTokens = 256

// calibrationMargin is added to the ratio of the server's tokens to chars/4
// measured so far, since the next request's text may tokenize a little
// worse than the ones measured.
const calibrationMargin = 0.1

// Result is a finished compaction, ready to be stored as a compaction entry
// (see [Result.Entry]).
type Result struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int
	// Details holds the file lists ([Details]) as JSON.
	Details jsontext.Value
	// Usage sums every request made, failed ones included; nil when no
	// model was called.
	Usage *llm.Usage
	// CustomInstructions are the user's instructions, stored on the entry.
	CustomInstructions string
	// Deterministic reports that code built the summary; FallbackReason
	// says why and ModelError holds the model's failure, if one failed.
	Deterministic  bool
	FallbackReason string
	ModelError     error
	// LedgerCheck is what the check against the ledger found and repaired
	// (also in Details).
	LedgerCheck *LedgerCheck
}

// Entry returns the compaction entry payload for the result.
func (r *Result) Entry() *session.CompactionEntry {
	return &session.CompactionEntry{
		Summary:            r.Summary,
		FirstKeptEntryID:   r.FirstKeptEntryID,
		TokensBefore:       r.TokensBefore,
		Details:            r.Details,
		CustomInstructions: r.CustomInstructions,
		Usage:              r.Usage,
	}
}

// cancelledError is how a cancelled compaction ends: it wraps the context's
// error (context.Canceled or context.DeadlineExceeded).
type cancelledError struct{ err error }

func (e *cancelledError) Error() string { return "compaction cancelled: " + e.err.Error() }
func (e *cancelledError) Unwrap() error { return e.err }

// refusedError is how a compaction ends when the provider refuses the
// credentials (a missing, wrong or expired key: HTTP 401 or 403). The
// deterministic summarizer does not take over: the user asked for a model
// and has a configuration to fix, and a summary by code, once stored,
// cannot be written again by the model. It wraps the provider's error, so
// errors.Is(err, llm.ErrAuth) holds.
type refusedError struct {
	model llm.Model
	err   error
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("the summarizer %s/%s refused the credentials (check its API key, or summarize offline): %v",
		e.model.Provider, e.model.ID, e.err)
}
func (e *refusedError) Unwrap() error { return e.err }

func isCancelled(err error) bool {
	var c *cancelledError
	return errors.As(err, &c)
}

// spanFailure reports that the model could not summarize a span. It holds
// what was done before the failure, so code can finish the job.
type spanFailure struct {
	reason string
	err    error
	// running is the summary so far (the previous summary when nothing
	// succeeded); remaining are the messages not yet summarized.
	running   string
	remaining []session.Message
}

func (f *spanFailure) Error() string {
	if f.err != nil {
		return f.reason + ": " + f.err.Error()
	}
	return f.reason
}
func (f *spanFailure) Unwrap() error { return f.err }

// summarizer makes the requests of one compaction or branch summary and
// sums their usage. It also learns, from every answer, how the server
// counts: the usage of a reply and the sizes of a refusal give the ratio of
// its tokens to the chars/4 estimate, and a refusal or a full context may
// show a window smaller than the model's. What it learns sizes the later
// requests of the same job (retries, further parts of a folded span, the
// turn prefix after the history); it is never used for the cut decisions of
// [Prepare], which stay chars/4 as in pi.
type summarizer struct {
	opts        Options
	outputLimit int
	usage       llm.Usage
	calls       int
	// ratio is the highest number of the server's tokens per chars/4
	// token measured so far, 0 before any measure; window is the context
	// window the server showed when smaller than the model's, else 0.
	ratio  float64
	window int
	// ledger is what the summary must keep; the summary built by code
	// keeps it itself.
	ledger *Ledger
}

func newSummarizer(opts Options, reserveTokens int) *summarizer {
	return &summarizer{opts: opts, outputLimit: outputLimit(opts.Model, reserveTokens)}
}

// outputLimit is the summary's output cap: 80 % of reserveTokens, and never
// more than the model's own limit. 0 leaves the model's limit in force.
func outputLimit(m llm.Model, reserveTokens int) int {
	limit := reserveTokens * 8 / 10
	if m.MaxTokens > 0 && (limit <= 0 || m.MaxTokens < limit) {
		limit = m.MaxTokens
	}
	return max(limit, 0)
}

// reasoning is the request's reasoning option: the session's thinking level
// when the model reasons and the level is not off.
func (s *summarizer) reasoning() llm.ThinkingLevel {
	if !s.opts.Model.Reasoning || s.opts.ThinkingLevel == "" || s.opts.ThinkingLevel == llm.ThinkingOff {
		return ""
	}
	return s.opts.ThinkingLevel
}

// transcriptOptions projects for this summarizer with n tool bodies.
func (s *summarizer) transcriptOptions(n int) TranscriptOptions {
	o := TranscriptOptionsFor(s.opts.Model)
	o.ToolBodies = n
	return o
}

// request builds the request for one prompt.
func (s *summarizer) request(in promptInput) *llm.Request {
	return &llm.Request{
		Model:        s.opts.Model,
		SystemPrompt: systemPrompt,
		Messages:     []llm.Message{&llm.UserMessage{Content: []llm.Content{llm.Text{Text: promptText(in)}}}},
		MaxTokens:    s.maxTokens(),
		Reasoning:    s.reasoning(),
		NoCache:      true,
	}
}

// contextWindow is the window requests are sized for: the one the server
// showed, else the model's, else [DefaultContextWindow].
func (s *summarizer) contextWindow() int {
	switch {
	case s.window > 0:
		return s.window
	case s.opts.Model.ContextWindow > 0:
		return s.opts.Model.ContextWindow
	}
	return DefaultContextWindow
}

// maxTokens is the output limit requests ask for: the summary's output
// limit, but at most a quarter of a window the server showed to be smaller
// than the model's, so that the conversation keeps room beside the answer
// (a window of 8,192 tokens where the model was said to have 128,000 leaves
// 2,048 for the summary). 0 leaves the model's limit in force.
func (s *summarizer) maxTokens() int {
	limit := s.outputLimit
	if s.window > 0 && (limit == 0 || limit > s.window/4) {
		limit = s.window / 4
	}
	return limit
}

// scale is how many of the server's tokens the budget counts per chars/4
// token: 1 until an answer measured the server's tokenizer, then the
// highest ratio measured plus [calibrationMargin], never below 1. A
// tokenizer sparser than chars/4 leaves the estimate alone: it already
// errs on the safe side, and a request never holds more than the window by
// chars/4.
func (s *summarizer) scale() float64 {
	if s.ratio == 0 {
		return 1
	}
	return max(1, s.ratio*(1+calibrationMargin))
}

// observe learns from what the server counted for req: prompt, its size in
// the server's tokens (0 when unknown), and window, a context window the
// server showed (0 when none).
func (s *summarizer) observe(req *llm.Request, prompt, window int) {
	estimate := tokensOf(req.SystemPrompt)
	for _, m := range req.Messages {
		if u, ok := m.(*llm.UserMessage); ok {
			estimate += tokensOf(llm.TextOf(u.Content))
		}
	}
	if prompt > 0 && estimate > 0 {
		s.ratio = max(s.ratio, float64(prompt)/float64(estimate))
	}
	if window > 0 && window < s.contextWindow() {
		s.window = window
	}
}

// inputBudget is the room for the transcript in a request, by chars/4: the
// context window less the output reserve, divided by the measured scale of
// the server's tokens, less the system prompt and the rest of the user
// message (task, instructions, previous summary). Before any measure it is
// the model's window less the reserve and the rest, all by chars/4.
func (s *summarizer) inputBudget(in promptInput) int {
	reserve := s.maxTokens()
	if reserve == 0 {
		reserve = DefaultReserveTokens * 8 / 10
	}
	in.transcript = ""
	room := float64(s.contextWindow()-reserve) / s.scale()
	return int(room) - tokensOf(systemPrompt) - tokensOf(promptText(in))
}

func (s *summarizer) progress(p Progress) {
	if s.opts.Progress != nil {
		s.opts.Progress(p)
	}
}

// summarizeSpan has the model summarize messages, updating previous when it
// is set. It never sends more than the model's window holds: the transcript
// is shrunk (tool bodies 3 → 1 → 0) and, when even that does not fit, the
// span is folded over several requests, oldest rounds first, each request
// updating the summary of the ones before (see [summarizer.fit]). A request
// the provider still finds too large is retried smaller
// ([summarizer.send]); what the server's answers showed of its tokenizer
// and window sizes every later part. The error is a *spanFailure when the
// model cannot do it, a *cancelledError, or a *refusedError when the
// provider refuses the credentials.
func (s *summarizer) summarizeSpan(ctx context.Context, k kind, msgs []session.Message, previous string, previousDeterministic bool) (string, error) {
	rs := rounds(msgs)
	running := previous
	for part := 1; len(rs) > 0; part++ {
		in := promptInput{
			kind:                  k,
			previous:              running,
			previousDeterministic: previousDeterministic && part == 1,
			instructions:          s.opts.CustomInstructions,
			replaceTask:           s.opts.ReplaceInstructions && k == kindBranch,
		}
		budget := s.inputBudget(in)
		if budget < minTranscriptTokens {
			return "", &spanFailure{
				reason:    fmt.Sprintf("the summarizer's context window (%d tokens) has no room left for the conversation", s.contextWindow()),
				running:   running,
				remaining: flatten(rs),
			}
		}
		out, n, err := s.send(ctx, in, rs, budget, part)
		if err != nil {
			if isCancelled(err) {
				return "", err
			}
			if errors.Is(err, llm.ErrAuth) {
				return "", &refusedError{model: s.opts.Model, err: err}
			}
			return "", &spanFailure{reason: "the summarizer model failed", err: err, running: running, remaining: flatten(rs)}
		}
		running = out
		rs = rs[n:]
	}
	return running, nil
}

// fit chooses how many leading rounds of rs the next request covers and how
// many tool bodies it keeps, so that its transcript fits budget tokens:
// all rounds with 3, 1 or 0 tool bodies if one of those fits; else as many
// rounds as fit with no tool bodies (at least one: an oversized round is
// bounded by [headTail] in [summarizer.send]), then as many bodies as still
// fit.
func (s *summarizer) fit(rs [][]session.Message, budget int) (rounds, bodies int) {
	fits := func(msgs []session.Message, n int) bool {
		return tokensOf(renderTranscript(msgs, s.transcriptOptions(n))) <= budget
	}
	all := flatten(rs)
	for _, n := range []int{DefaultToolBodies, 1, 0} {
		if fits(all, n) {
			return len(rs), n
		}
	}
	used := 0
	for rounds < len(rs) {
		size := tokensOf(renderTranscript(rs[rounds], s.transcriptOptions(0))) + 1
		if used+size > budget {
			break
		}
		used += size
		rounds++
	}
	rounds = max(rounds, 1)
	chunk := flatten(rs[:rounds])
	for _, n := range []int{DefaultToolBodies, 1} {
		if fits(chunk, n) {
			return rounds, n
		}
	}
	return rounds, 0
}

// send has the model summarize the leading rounds of rs that fit budget
// (see [summarizer.fit]) and returns the summary and the number of rounds
// the part covered. When the provider answers that the request does not fit
// the context window (or the context filled before the summary was done),
// at most [MaxOverflowRetries] smaller requests follow. An answer that
// shows how the server counts (a refusal with its sizes, a full context
// with its usage) shrinks the budget ([summarizer.observe]); the next
// attempt is then fitted again to it, the rounds that no longer fit being
// left to the next part, so that nothing is lost. An answer that shows
// nothing steps down the ladder of [summarizer.attempt].
func (s *summarizer) send(ctx context.Context, in promptInput, rs [][]session.Message, budget, part int) (string, int, error) {
	n, bodies := s.fit(rs, budget)
	step := 0
	repeated := false
	var err error
	for attempt := 0; ; attempt++ {
		var out string
		out, err = s.call(ctx, s.attempt(in, rs[:n], bodies, budget, step), in.kind.phase(), part, attempt)
		if err == nil {
			return out, n, nil
		}
		if !repeated && isRepeatable(err) {
			// A server that failed mid-answer, or answered nothing, may
			// well answer the same request: once.
			repeated = true
			s.progress(Progress{Kind: ProgressRepeat, Phase: in.kind.phase(), Part: part, Attempt: attempt + 1, Err: err})
			attempt--
			continue
		}
		if isCancelled(err) || !isOverflow(err) {
			return "", 0, err
		}
		if attempt == MaxOverflowRetries {
			break
		}
		if smaller := s.inputBudget(in); smaller < budget {
			if smaller < minTranscriptTokens {
				return "", 0, fmt.Errorf("the context window the server showed (%d tokens) has no room left for the conversation: %w", s.contextWindow(), err)
			}
			budget, step = smaller, 0
			n, bodies = s.fit(rs, budget)
		} else {
			step++
		}
		s.progress(Progress{Kind: ProgressRetry, Phase: in.kind.phase(), Part: part, Attempt: attempt + 1, Err: err})
	}
	return "", 0, fmt.Errorf("request still too large after %d smaller retries: %w", MaxOverflowRetries, err)
}

// failedMidAnswer is an answer that failed after some of it had streamed.
type failedMidAnswer struct{ err error }

func (e *failedMidAnswer) Error() string {
	return "the answer failed after it had begun: " + e.err.Error()
}
func (e *failedMidAnswer) Unwrap() error { return e.err }

// isRepeatable reports whether a failed answer is worth sending the same
// request again: it failed after it had begun, or it was empty.
func isRepeatable(err error) bool {
	var mid *failedMidAnswer
	return errors.As(err, &mid) || errors.Is(err, ErrEmptySummary)
}

// isOverflow reports whether a failed answer calls for a smaller request:
// the provider's context overflow, or a context that filled while the
// model wrote.
func isOverflow(err error) bool {
	return errors.Is(err, llm.ErrContextOverflow) || errors.Is(err, ErrContextFilled)
}

// attempt builds the request of one step of the ladder for the rounds rs.
// Step 0 sends rs with the chosen number of tool bodies. Step r (1 or 2)
// drops the r oldest rounds while another remains, keeps 1 and then 0 tool
// bodies, and lowers the bound to (4-r)/4 of the budget, since the estimate
// proved too low. Whenever the transcript exceeds the bound (one oversized
// round, say), its head and tail are kept and the middle left out.
func (s *summarizer) attempt(in promptInput, rs [][]session.Message, bodies, budget, attempt int) *llm.Request {
	drop := min(attempt, len(rs)-1)
	n := bodies
	if attempt == 1 {
		n = min(n, 1)
	} else if attempt >= 2 {
		n = 0
	}
	limit := budget * (4 - min(attempt, 2)) / 4
	text := renderTranscript(flatten(rs[drop:]), s.transcriptOptions(n))
	if tokensOf(text) > limit {
		units := max(limit*4-100, 0)
		text = headTail(text, units/2, units-units/2)
	}
	in.transcript = text
	return s.request(in)
}

// call sends one request and returns the summary text. Text deltas are
// passed to Progress as they stream. The usage of every answer is added up,
// whatever its outcome, and what the server counted is observed. A
// cancelled context gives a *cancelledError; an answer cut off (by the
// output limit, [ErrSummaryTruncated], or by a full context,
// [ErrContextFilled]) or without text is an error, never a summary.
func (s *summarizer) call(ctx context.Context, req *llm.Request, phase Phase, part, attempt int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", &cancelledError{err}
	}
	s.progress(Progress{Kind: ProgressRequest, Phase: phase, Part: part, Attempt: attempt})
	msg, err := llm.Collect(s.relay(s.opts.Provider.Stream(ctx, req), phase, part, attempt))
	input := 0
	if msg != nil {
		s.usage = s.usage.Add(msg.Usage)
		s.calls++
		input = msg.Usage.Input + msg.Usage.CacheRead + msg.Usage.CacheWrite
		s.observe(req, input, 0)
	}
	if cerr := ctx.Err(); cerr != nil {
		return "", &cancelledError{cerr}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return "", &cancelledError{err}
		}
		if apiErr := (*llm.APIError)(nil); errors.As(err, &apiErr) {
			s.observe(req, apiErr.PromptTokens, apiErr.ContextTokens)
		}
		if msg != nil && len(msg.Content) > 0 && !isOverflow(err) {
			return "", &failedMidAnswer{err}
		}
		return "", err
	}
	switch msg.StopReason {
	case llm.StopReasonLength:
		if !llm.LengthStopOverflow(msg, req.MaxTokens, s.contextWindow()) {
			return "", ErrSummaryTruncated
		}
		s.observe(req, 0, input+msg.Usage.Output)
		if req.MaxTokens > 0 {
			return "", fmt.Errorf("%w (%d input and %d output tokens, below the output limit of %d)", ErrContextFilled, input, msg.Usage.Output, req.MaxTokens)
		}
		return "", fmt.Errorf("%w (%d input and %d output tokens)", ErrContextFilled, input, msg.Usage.Output)
	case llm.StopReasonError, llm.StopReasonAborted:
		if msg.ErrorMessage != "" {
			return "", fmt.Errorf("summarizer stopped (%s): %s", msg.StopReason, msg.ErrorMessage)
		}
		return "", fmt.Errorf("summarizer stopped (%s)", msg.StopReason)
	}
	text := strings.TrimSpace(msg.Text())
	if text == "" {
		return "", ErrEmptySummary
	}
	return text, nil
}

// relay passes a stream through, reporting its text deltas.
func (s *summarizer) relay(events iter.Seq[llm.Event], phase Phase, part, attempt int) iter.Seq[llm.Event] {
	if s.opts.Progress == nil {
		return events
	}
	return func(yield func(llm.Event) bool) {
		for ev := range events {
			if ev.Type == llm.EventTextDelta && ev.Delta != "" {
				s.progress(Progress{Kind: ProgressText, Phase: phase, Part: part, Attempt: attempt, Delta: ev.Delta})
			}
			if !yield(ev) {
				return
			}
		}
	}
}

// usagePtr returns the summed usage, or nil when no answer came back.
func (s *summarizer) usagePtr() *llm.Usage {
	if s.calls == 0 {
		return nil
	}
	u := s.usage
	return &u
}

// fallback is the outcome of giving the job to the deterministic summarizer.
type fallback struct {
	reason string
	err    error
}

// fallbackFrom turns a model failure into a fallback, reporting it.
func (s *summarizer) fallbackFrom(phase Phase, f *spanFailure) fallback {
	fb := fallback{reason: f.reason, err: f.err}
	if f.err != nil {
		fb.reason = f.reason + ": " + f.err.Error()
	}
	s.progress(Progress{Kind: ProgressFallback, Phase: phase, Reason: fb.reason, Err: f.err})
	return fb
}

// offlineReason is the reason recorded when there is no model at all.
const offlineReason = "no summarizer model was available (offline)"

// Compact writes the summary a preparation calls for and returns the
// compaction to store. With a provider, the model summarizes the history
// (updating the previous summary) and, for a split turn, the turn's first
// part after it, one request after the other; the two are merged. Without
// one, or when the model cannot do it (context overflow after the retries,
// an answer cut off at the output limit, an empty answer, any error left
// after the provider's own retries), the deterministic summarizer builds
// the summary by code and the result says so. The file lists are appended
// by code either way.
//
// Compact never returns a partial result: if ctx is cancelled at any point
// it returns an error wrapping the context's error and nothing else. Nor
// does it fall back when the provider refuses the credentials (401, 403):
// the error wraps llm.ErrAuth, so the user learns that the key is wrong
// instead of getting a summary written by code without asking for one.
func Compact(ctx context.Context, prep *Preparation, opts Options) (*Result, error) {
	if prep == nil {
		return nil, errors.New("no preparation")
	}
	if len(prep.MessagesToSummarize) == 0 && len(prep.TurnPrefixMessages) == 0 {
		return nil, notCompactable(ErrNothingToCompact, "the preparation has no messages to summarize")
	}
	if prep.FirstKeptEntryID == "" {
		return nil, errors.New("the preparation has no first kept entry")
	}
	if err := ctx.Err(); err != nil {
		return nil, &cancelledError{err}
	}
	led := prep.Ledger
	if led == nil {
		history, prefix := prep.spans()
		led = LedgerOf(append(history[:len(history):len(history)], prefix...))
	}
	led = led.withInstructions(opts.CustomInstructions)
	s := newSummarizer(opts, prep.Settings.ReserveTokens)
	s.ledger = led
	summary, fb, err := s.compactSummary(ctx, prep)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &cancelledError{err}
	}
	summary, check := led.repair(summary, prep.FileOps.modified(), s.bound(prep.replacedTokens(), fb != nil))
	fileLists, details := finish(prep.FileOps, fb, led, check)
	if fb != nil {
		if summary, fileLists, err = withinReplaced(summary, fileLists, prep, fb.reason); err != nil {
			return nil, err
		}
	}
	res := &Result{
		LedgerCheck:        check,
		Summary:            summary + fileLists,
		FirstKeptEntryID:   prep.FirstKeptEntryID,
		TokensBefore:       prep.TokensBefore,
		Details:            details,
		Usage:              s.usagePtr(),
		CustomInstructions: strings.TrimSpace(opts.CustomInstructions),
	}
	if fb != nil {
		res.Deterministic, res.FallbackReason, res.ModelError = true, fb.reason, fb.err
	}
	return res, nil
}

// finish renders the file lists appended to a summary and the details
// stored with it: the lists, the ledger and its check (when they hold
// anything), marked when code built the summary.
func finish(files FileOps, fb *fallback, led *Ledger, check *LedgerCheck) (fileLists string, details jsontext.Value) {
	readFiles, modifiedFiles := files.Lists()
	d := Details{ReadFiles: readFiles, ModifiedFiles: modifiedFiles}
	if check != nil && check.Checked > 0 {
		d.LedgerCheck = check
	}
	if led != nil && (len(led.Constraints) > 0 || led.Request != "" || led.Failure != nil) {
		stored := *led
		stored.Pins = nil // the pin entries are their record
		d.Ledger = &stored
	}
	if fb != nil {
		d.Summarizer, d.DeterministicReason = SummarizerDeterministic, fb.reason
	}
	return FormatFileLists(readFiles, modifiedFiles), d.Encode()
}

// offline reports that no model is available and returns the fallback.
func (s *summarizer) offline() *fallback {
	s.progress(Progress{Kind: ProgressFallback, Phase: PhaseDeterministic, Reason: offlineReason})
	return &fallback{reason: offlineReason}
}

// compactSummary produces the summary text (without file lists).
func (s *summarizer) compactSummary(ctx context.Context, prep *Preparation) (string, *fallback, error) {
	history, prefix := prep.spans()
	split := len(prefix) > 0
	// The previous summary's file lists are recomputed and appended again
	// below; a copy inside the summary would repeat them.
	previous := stripFileLists(prep.PreviousSummary)
	limit := s.deterministicLimit()
	if s.opts.Provider == nil {
		fb := s.offline()
		return deterministicSummary(append(history[:len(history):len(history)], prefix...), previous, s.opts.CustomInstructions, fb.reason, limit, s.ledger), fb, nil
	}

	summary := previous // a split turn with no history keeps it (pi drops it)
	if len(history) > 0 {
		text, err := s.summarizeSpan(ctx, kindHistory, history, previous, prep.PreviousSummarizer == SummarizerDeterministic)
		var f *spanFailure
		if errors.As(err, &f) {
			fb := s.fallbackFrom(PhaseHistory, f)
			rest := append(f.remaining[:len(f.remaining):len(f.remaining)], prefix...)
			return deterministicSummary(rest, f.running, s.opts.CustomInstructions, fb.reason, limit, s.ledger), &fb, nil
		}
		if err != nil {
			return "", nil, err
		}
		summary = text
	}
	if !split {
		return summary, nil, nil
	}
	turn, err := s.summarizeSpan(ctx, kindTurnPrefix, prefix, "", false)
	var f *spanFailure
	if errors.As(err, &f) {
		fb := s.fallbackFrom(PhaseTurnPrefix, f)
		return deterministicSummary(prefix, summary, s.opts.CustomInstructions, fb.reason, limit, s.ledger), &fb, nil
	}
	if err != nil {
		return "", nil, err
	}
	if summary == "" {
		summary = noHistory
	}
	return summary + splitTurnSeparator + turn, nil, nil
}

// bound is the most tokens a summary replacing replaced tokens may take
// with its repairs ([SummaryBound]); a summary built by code keeps its own,
// smaller budget.
func (s *summarizer) bound(replaced int, deterministic bool) int {
	b := SummaryBound(replaced, s.deterministicLimit())
	if deterministic {
		b = min(b, deterministicBudget(replaced, s.deterministicLimit()))
	}
	return b
}

// deterministicLimit bounds a summary built by code to what a model's
// summary could be: the output limit, or 80 % of the default reserve.
func (s *summarizer) deterministicLimit() int {
	if s.outputLimit > 0 {
		return s.outputLimit
	}
	return DefaultReserveTokens * 8 / 10
}
