package compaction

import (
	"errors"
	"strings"

	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// ContextKind is a kind of what fills a context.
type ContextKind string

// The kinds of a context's content, in the order a breakdown lists them.
const (
	KindSystem      ContextKind = "system"      // the system prompt's text
	KindTools       ContextKind = "tools"       // the tool definitions
	KindSummaries   ContextKind = "summaries"   // compaction and branch summaries
	KindUser        ContextKind = "user"        // the user's text
	KindAssistant   ContextKind = "assistant"   // the model's text
	KindThinking    ContextKind = "thinking"    // the model's reasoning
	KindToolCalls   ContextKind = "toolCalls"   // tool calls: names and arguments
	KindToolResults ContextKind = "toolResults" // what the tools returned
	KindImages      ContextKind = "images"      // images anywhere, 1,200 tokens each
	KindOther       ContextKind = "other"       // extension messages, the user's shell commands
)

// contextKinds are the kinds in order, with the letter the bar draws them
// with and their name for people.
var contextKinds = []struct {
	kind   ContextKind
	letter byte
	name   string
}{
	{KindSystem, 'P', "system prompt"},
	{KindTools, 'T', "tool definitions"},
	{KindSummaries, 'S', "summaries"},
	{KindUser, 'U', "user"},
	{KindAssistant, 'A', "assistant text"},
	{KindThinking, 'R', "thinking"},
	{KindToolCalls, 'C', "tool calls"},
	{KindToolResults, 'O', "tool results"},
	{KindImages, 'I', "images"},
	{KindOther, 'X', "other"},
}

// ContextPart is the share of one kind.
type ContextPart struct {
	Kind ContextKind `json:"kind"`
	// Tokens is its size by chars/4.
	Tokens int `json:"tokens"`
}

// ContextBreakdown is what fills a context: every kind's tokens, the
// window and the marks on it, and what a compaction now would summarize and
// keep.
type ContextBreakdown struct {
	// Parts holds every kind, in the order of the kinds (those with no
	// tokens too); Total is their sum.
	Parts []ContextPart `json:"parts"`
	Total int           `json:"total"`
	// Estimate is the context's size as the threshold check measures it:
	// the last usage it can trust plus chars/4 of what followed
	// ([session.Context.EstimateNext]).
	Estimate int `json:"estimate"`
	// Window is the model's context window; Threshold where automatic
	// compaction starts (Window less reserveTokens) and BackgroundMark
	// where the background summary starts (0 when it is off).
	Window         int `json:"window"`
	Threshold      int `json:"threshold"`
	BackgroundMark int `json:"backgroundMark,omitzero"`
	// Compaction is what a compaction now would do; nil when there is
	// nothing to compact, and NotCompactable says why.
	Compaction     *CutPreview `json:"compaction"`
	NotCompactable string      `json:"notCompactable,omitzero"`
}

// CutPreview is what a compaction now would summarize and keep.
type CutPreview struct {
	// FirstKeptEntryID is where the kept part starts.
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	// SummarizeMessages and SummarizeTokens are the messages the summary
	// would replace (both spans) and their size, the previous summary
	// included; KeepMessages and KeepTokens what stays word for word.
	SummarizeMessages int  `json:"summarizeMessages"`
	SummarizeTokens   int  `json:"summarizeTokens"`
	KeepMessages      int  `json:"keepMessages"`
	KeepTokens        int  `json:"keepTokens"`
	IsSplitTurn       bool `json:"isSplitTurn"`
	// LedgerTokens is the size of the must-survive ledger the summary
	// would carry (part of the summary, within its bound); LedgerBudget
	// the most its rules and the user's words may take.
	LedgerTokens int `json:"ledgerTokens"`
	LedgerBudget int `json:"ledgerBudget"`
}

// Breakdown measures the context at the end of path, a root→leaf list of
// entries, for a model with a context window of window tokens (0: unknown,
// no marks), with compaction settings s and the background summary starting
// at backgroundPercent of the threshold (0: off).
func Breakdown(path []*session.Entry, s Settings, window, backgroundPercent int) (*ContextBreakdown, error) {
	ctx, err := session.BuildContext(path)
	if err != nil {
		return nil, err
	}
	chars := map[ContextKind]int{}
	for _, m := range ctx.Messages {
		addChars(chars, m)
	}
	b := &ContextBreakdown{Estimate: ctx.EstimateNext().Tokens, Window: max(window, 0)}
	for _, k := range contextKinds {
		p := ContextPart{Kind: k.kind, Tokens: (chars[k.kind] + 3) / 4}
		b.Parts = append(b.Parts, p)
		b.Total += p.Tokens
	}
	if b.Window > 0 {
		b.Threshold = max(Threshold(b.Window, s), 0)
		if backgroundPercent > 0 {
			b.BackgroundMark = max(BackgroundMark(b.Window, backgroundPercent, s), 0)
		}
	}
	prep, err := Prepare(path, s)
	var nc *NotCompactableError
	switch {
	case errors.As(err, &nc):
		b.NotCompactable = nc.Reason
		return b, nil
	case err != nil:
		return nil, err
	}
	history, prefix := prep.spans()
	c := &CutPreview{FirstKeptEntryID: prep.FirstKeptEntryID, IsSplitTurn: prep.IsSplitTurn,
		SummarizeMessages: len(history) + len(prefix), SummarizeTokens: prep.replacedTokens(),
		LedgerTokens: prep.Ledger.Tokens(), LedgerBudget: LedgerBudget}
	kept := false
	for i, e := range ctx.Entries {
		if kept = kept || e.ID == prep.FirstKeptEntryID; kept {
			c.KeepMessages++
			c.KeepTokens += session.EstimateTokens(ctx.Messages[i])
		}
	}
	b.Compaction = c
	return b, nil
}

// addChars adds a message's characters to the kinds they belong to, as
// session.EstimateChars counts them.
func addChars(chars map[ContextKind]int, m session.Message) {
	content := func(kind ContextKind, cs []llm.Content) {
		for _, c := range cs {
			switch c := c.(type) {
			case llm.Text:
				chars[kind] += llm.UTF16Len(c.Text)
			case llm.Image:
				chars[KindImages] += session.ImageChars
			}
		}
	}
	switch m := m.(type) {
	case *session.SystemMessage:
		prompt := llm.UTF16Len(m.Content)
		for _, s := range m.Sections {
			if !s.Removed {
				prompt += llm.UTF16Len(s.Text)
			}
		}
		total := session.EstimateChars(m)
		chars[KindSystem] += min(prompt, total)
		chars[KindTools] += max(total-prompt, 0)
	case *llm.UserMessage:
		content(KindUser, m.Content)
	case *llm.ToolResultMessage:
		content(KindToolResults, m.Content)
	case *session.CustomMessage:
		content(KindOther, m.Content)
	case *llm.AssistantMessage:
		for _, c := range m.Content {
			switch c := c.(type) {
			case llm.Text:
				chars[KindAssistant] += llm.UTF16Len(c.Text)
			case llm.Thinking:
				chars[KindThinking] += llm.UTF16Len(c.Thinking)
			case llm.ToolCall:
				chars[KindToolCalls] += llm.UTF16Len(c.Name) + c.Arguments.Len()
			}
		}
	case *session.BashExecution:
		chars[KindOther] += session.EstimateChars(m)
	case *session.BranchSummaryMessage, *session.CompactionSummaryMessage:
		chars[KindSummaries] += session.EstimateChars(m)
	}
}

// Tokens returns the tokens of kind k.
func (b *ContextBreakdown) Tokens(k ContextKind) int {
	for _, p := range b.Parts {
		if p.Kind == k {
			return p.Tokens
		}
	}
	return 0
}

// Bar draws the context as a line of width characters standing for the
// window (for the context itself when the window is unknown or smaller):
// each kind by its letter (see [ContextBreakdown.Legend]), free room as
// '.', the threshold as '|' and the background mark as ':' (over what is
// there). Every kind with tokens gets a cell at least, pushing the next
// ones right by as much.
func (b *ContextBreakdown) Bar(width int) string {
	if width <= 0 {
		return ""
	}
	scale := max(b.Window, b.Total, 1)
	cells := make([]byte, width)
	for i := range cells {
		cells[i] = '.'
	}
	at, next := 0, 0
	for i, p := range b.Parts {
		if p.Tokens == 0 {
			continue
		}
		from := max(cell(at, scale, width), next)
		to := max(cell(at+p.Tokens, scale, width), from+1) // every kind shows
		for c := from; c < min(to, width); c++ {
			cells[c] = contextKinds[i].letter
		}
		at, next = at+p.Tokens, to
	}
	mark := func(tokens int, r byte) {
		if tokens > 0 && tokens < scale {
			cells[min(cell(tokens, scale, width), width-1)] = r
		}
	}
	mark(b.BackgroundMark, ':')
	mark(b.Threshold, '|')
	return string(cells)
}

// cell is the cell of a bar of width cells for scale tokens where tokens
// falls.
func cell(tokens, scale, width int) int {
	return int(int64(tokens) * int64(width) / int64(scale))
}

// Legend names the letters of the bar with their tokens, for the kinds
// that have any: "P system prompt 1,234 · T tool definitions 2,345 · …".
func (b *ContextBreakdown) Legend() string {
	var parts []string
	for i, p := range b.Parts {
		if p.Tokens > 0 {
			parts = append(parts, string(contextKinds[i].letter)+" "+contextKinds[i].name+" "+numfmt.Commas(p.Tokens))
		}
	}
	return strings.Join(parts, " · ")
}

// KindName is a kind's name for people ("tool definitions").
func KindName(k ContextKind) string {
	for _, c := range contextKinds {
		if c.kind == k {
			return c.name
		}
	}
	return string(k)
}

// KindLetter is the letter [ContextBreakdown.Bar] draws a kind with ('?'
// for a kind it does not know), for a front end that colours the bar or
// lists the kinds beside it.
func KindLetter(k ContextKind) byte {
	for _, c := range contextKinds {
		if c.kind == k {
			return c.letter
		}
	}
	return '?'
}
