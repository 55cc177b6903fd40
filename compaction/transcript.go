package compaction

import (
	"strconv"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Limits of the request projection, in UTF-16 code units (JavaScript
// string length, the unit of every estimate).
const (
	// DefaultToolBodies is how many of the newest tool results keep their
	// body in a summary request; older ones show only their header.
	DefaultToolBodies = 3
	// toolBodyHead and toolBodyTail bound a kept tool-result body: its
	// first and last this many units survive, the middle is replaced by a
	// marker. Heads carry what was run or read, tails the outcome (test
	// summaries, the last error).
	toolBodyHead = 2000
	toolBodyTail = 2000
)

// Placeholders the projection puts in place of content.
const (
	imagePlaceholder      = "[image]"
	toolResultPlaceholder = "[tool result]"
	emptyToolErrorBody    = "(no output)"
)

// TranscriptOptions say how messages are projected into the transcript a
// summarizer reads.
type TranscriptOptions struct {
	// Reasoning keeps readable assistant reasoning as [Assistant reasoning]
	// parts. Prime leaves it out for Claude-family summarizers, which
	// reject earlier reasoning replayed as text (see [TranscriptOptionsFor]).
	Reasoning bool `json:"reasoning"`
	// ToolBodies is how many of the newest shown tool results keep their
	// body; older ones read [tool result]. Prime's requests start with
	// [DefaultToolBodies] and keep fewer only when a request does not fit.
	// Zero or less keeps none.
	ToolBodies int `json:"toolBodies"`
}

// TranscriptOptionsFor returns the options of Prime's own summary requests
// to the summarizer m (as long as the conversation fits its window):
// reasoning kept unless m is Claude-family, and the newest
// [DefaultToolBodies] tool-result bodies. The zero model (no summarizer
// known) keeps reasoning.
func TranscriptOptionsFor(m llm.Model) TranscriptOptions {
	return TranscriptOptions{Reasoning: !isClaudeFamily(m), ToolBodies: DefaultToolBodies}
}

// Transcript serializes provider messages into the text a summarizer reads:
// the text of pi's serializeConversation, exactly as Prime's own summary
// requests hold it inside <conversation> tags. Agent messages become
// provider messages with [session.ToLLM] first, as Prime's summarizer
// converts them:
//
//	text := compaction.Transcript(session.ToLLM(prep.MessagesToSummarize), compaction.TranscriptOptionsFor(model))
//
// Parts are separated by a blank line:
//
//	[User]: text                       (text blocks joined; images as [image])
//	[Assistant reasoning]: thinking    (only with opts.Reasoning)
//	[Assistant]: text
//	[Assistant tool calls]: name#id(key=<json>, ...); name#id(...)
//	[Tool result name#id error=false]: body
//
// Tool results are dropped when useless (no text but white space, no image,
// and not an error) or orphaned (no call with their id earlier in messages).
// Only the newest opts.ToolBodies shown results keep their body, each bounded
// to its first and last 2,000 UTF-16 units; older ones read [tool result].
// Redacted reasoning is never shown. Messages of other types are skipped.
// It reads the messages and builds new text; nothing in them is changed.
func Transcript(messages []llm.Message, opts TranscriptOptions) string {

	// Which tool results are shown, and which of those keep a body.
	calls := make(map[string]string) // call id → tool name
	shown := make([]bool, len(messages))
	for i, m := range messages {
		switch m := m.(type) {
		case *llm.AssistantMessage:
			for _, c := range m.Content {
				if tc, ok := c.(llm.ToolCall); ok && tc.ID != "" {
					calls[tc.ID] = tc.Name
				}
			}
		case *llm.ToolResultMessage:
			_, called := calls[m.ToolCallID]
			shown[i] = called && !uselessResult(m)
		}
	}
	bodies := make([]bool, len(messages))
	for i, left := len(messages)-1, opts.ToolBodies; i >= 0 && left > 0; i-- {
		if shown[i] {
			bodies[i] = true
			left--
		}
	}

	var b strings.Builder
	part := func(label, text string) {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(label)
		b.WriteString(": ")
		b.WriteString(text)
	}
	for i, m := range messages {
		switch m := m.(type) {
		case *llm.UserMessage:
			if text := contentText(m.Content); text != "" {
				part("[User]", text)
			}
		case *llm.AssistantMessage:
			var thinking, texts, toolCalls []string
			for _, c := range m.Content {
				switch c := c.(type) {
				case llm.Thinking:
					if !c.Redacted && strings.TrimSpace(c.Thinking) != "" {
						thinking = append(thinking, c.Thinking)
					}
				case llm.Text:
					if c.Text != "" {
						texts = append(texts, c.Text)
					}
				case llm.ToolCall:
					toolCalls = append(toolCalls, formatToolCall(c))
				}
			}
			if opts.Reasoning && len(thinking) > 0 {
				part("[Assistant reasoning]", strings.Join(thinking, "\n"))
			}
			if len(texts) > 0 {
				part("[Assistant]", strings.Join(texts, "\n"))
			}
			if len(toolCalls) > 0 {
				part("[Assistant tool calls]", strings.Join(toolCalls, "; "))
			}
		case *llm.ToolResultMessage:
			if !shown[i] {
				continue
			}
			name := m.ToolName
			if name == "" {
				name = calls[m.ToolCallID]
			}
			label := "[Tool result " + name + "#" + m.ToolCallID + " error=" + strconv.FormatBool(m.IsError) + "]"
			body := toolResultPlaceholder
			if bodies[i] {
				body = contentText(m.Content)
				if strings.TrimSpace(body) == "" {
					body = emptyToolErrorBody
				}
				body = headTail(body, toolBodyHead, toolBodyTail)
			}
			part(label, body)
		}
	}
	return b.String()
}

// renderTranscript is [Transcript] of agent messages, converted as the
// model sees them by [session.ToLLM].
func renderTranscript(messages []session.Message, opts TranscriptOptions) string {
	return Transcript(session.ToLLM(messages), opts)
}

// spans returns the two spans [Compact] summarizes: the history and, for a
// split turn, the turn's first part. A preparation that is not split, or
// whose split has no prefix, is summarized as one history: the turn prefix
// (if any) follows the messages to summarize.
func (p *Preparation) spans() (history, turnPrefix []session.Message) {
	history, turnPrefix = p.MessagesToSummarize, p.TurnPrefixMessages
	if !p.IsSplitTurn || len(turnPrefix) == 0 {
		return append(history[:len(history):len(history)], turnPrefix...), nil
	}
	return history, turnPrefix
}

// Transcripts returns the transcripts ([Transcript]) of what [Compact]
// summarizes for p: the history, and the first part of a split turn ("" when
// the turn is not split; a prefix given without a split is part of the
// history, as Compact treats it). With [TranscriptOptionsFor] the
// summarizer, they are the texts of Prime's own requests whenever each span
// fits one request with all its tool bodies; Prime shrinks or folds a span
// that does not.
func (p *Preparation) Transcripts(opts TranscriptOptions) (history, turnPrefix string) {
	h, t := p.spans()
	if len(t) > 0 {
		turnPrefix = renderTranscript(t, opts)
	}
	return renderTranscript(h, opts), turnPrefix
}

// Transcript returns the transcript ([Transcript]) of the branch messages
// [SummarizeBranch] summarizes: those within the budget. With
// [TranscriptOptionsFor] the summarizer, it is the text of Prime's own
// request when the messages fit one request with all their tool bodies.
func (p *BranchPreparation) Transcript(opts TranscriptOptions) string {
	return renderTranscript(p.Messages, opts)
}

// uselessResult reports a tool result that tells the summarizer nothing: no
// text but white space, no image, and not an error (an empty error still
// says the call failed).
func uselessResult(m *llm.ToolResultMessage) bool {
	if m.IsError {
		return false
	}
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.Image:
			return false
		case llm.Text:
			if strings.TrimSpace(c.Text) != "" {
				return false
			}
		}
	}
	return true
}

// contentText renders user or tool-result content: text blocks joined with
// no separator (as pi reads them), each image as [image] set off from
// neighbouring text by a space.
func contentText(content []llm.Content) string {
	var b strings.Builder
	prevImage := false
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			if prevImage && c.Text != "" {
				b.WriteByte(' ')
			}
			b.WriteString(c.Text)
			prevImage = false
		case llm.Image:
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(imagePlaceholder)
			prevImage = true
		}
	}
	return b.String()
}

// formatToolCall renders name#id(key=<json>, ...) with the arguments in
// stored order, each value as JSON.stringify prints it. Arguments that are
// not an object are shown whole inside the parentheses.
func formatToolCall(c llm.ToolCall) string {
	var b strings.Builder
	b.WriteString(c.Name)
	b.WriteByte('#')
	b.WriteString(c.ID)
	b.WriteByte('(')
	v := c.Arguments.Value()
	if v.Kind() != '{' {
		b.Write(v)
	} else {
		first := true
		for k, val := range c.Arguments.Members() {
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(k)
			b.WriteByte('=')
			b.Write(val)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// headTail bounds s to its first head and last tail UTF-16 units, putting a
// marker with the number of units left out in between. Surrogate pairs are
// never split. s is returned unchanged when it fits in head+tail units plus
// the marker's own length, so the bound never makes text longer.
func headTail(s string, head, tail int) string {
	n := llm.UTF16Len(s)
	if n <= head+tail+64 {
		return s
	}
	h, hu := llm.UTF16Prefix(s, head)
	t, tu := utf16Suffix(s, tail)
	return h + "\n\n[... " + strconv.Itoa(n-hu-tu) + " characters left out ...]\n\n" + t
}

// utf16Suffix returns the longest suffix of s at most n UTF-16 units long
// that does not split a surrogate pair, and its length in units.
func utf16Suffix(s string, n int) (string, int) {
	units := 0
	i := len(s)
	for i > 0 {
		j := i - 1
		for j > 0 && s[j]&0xC0 == 0x80 {
			j--
		}
		w := llm.UTF16Len(s[j:i])
		if units+w > n {
			break
		}
		units += w
		i = j
	}
	return s[i:], units
}

// tokensOf estimates text's size in tokens with the same chars/4 rule as the
// session's estimates.
func tokensOf(s string) int { return (llm.UTF16Len(s) + 3) / 4 }

// TranscriptTokens estimates a transcript's size in tokens as Prime sizes
// its summary requests: UTF-16 code units divided by 4, rounded up (the rule
// of [session.EstimateTokens]).
func TranscriptTokens(text string) int { return tokensOf(text) }

// isClaudeFamily reports whether a summarizer model is one of Anthropic's
// Claude models, which reject earlier reasoning replayed as text: served
// over the Anthropic Messages API, by the "anthropic" provider, or with
// "claude" in its id (Claude through Bedrock, Vertex, OpenRouter or a
// compatible proxy).
func isClaudeFamily(m llm.Model) bool {
	return m.API == llm.APIAnthropicMessages || strings.EqualFold(m.Provider, "anthropic") ||
		strings.Contains(strings.ToLower(m.ID), "claude")
}

// rounds splits messages into user rounds: a round starts at a message
// that starts a turn for the model (a user message, a bash execution the
// model sees, a custom message or a summary) and runs to the next. Messages
// before the first such start (a span that begins mid-turn) form a round of
// their own, the oldest.
func rounds(messages []session.Message) [][]session.Message {
	var out [][]session.Message
	startAt := 0
	for i, m := range messages {
		if i > startAt && roundStart(m) {
			out = append(out, messages[startAt:i])
			startAt = i
		}
	}
	if startAt < len(messages) {
		out = append(out, messages[startAt:])
	}
	return out
}

func roundStart(m session.Message) bool {
	switch m := m.(type) {
	case *llm.UserMessage, *session.CustomMessage, *session.BranchSummaryMessage, *session.CompactionSummaryMessage:
		return true
	case *session.BashExecution:
		return !m.ExcludeFromContext
	}
	return false
}

func flatten(rs [][]session.Message) []session.Message {
	n := 0
	for _, r := range rs {
		n += len(r)
	}
	out := make([]session.Message, 0, n)
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}
