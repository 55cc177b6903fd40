package session

import "github.com/prime-agent/prime/llm"

// ImageChars is the size in characters an image is counted as in token
// estimates (1,200 tokens).
const ImageChars = 4800

// EstimateTokens estimates a message's size in tokens the way pi does:
// ceil(chars/4), where chars counts UTF-16 code units of
//
//   - user, custom and tool-result messages: their text, plus ImageChars per image;
//   - assistant messages: text, thinking, and each tool call's name and
//     arguments as JSON.stringify prints them;
//   - bash executions: command and output (even when excluded from context);
//   - summaries: the summary text;
//   - system messages: the content, the text of every section, and the
//     ToolsAdded list as JSON.stringify prints it;
//   - anything else: nothing.
func EstimateTokens(m Message) int {
	return (EstimateChars(m) + 3) / 4
}

// EstimateChars is the character count behind [EstimateTokens].
func EstimateChars(m Message) int {
	switch m := m.(type) {
	case *llm.UserMessage:
		return contentChars(m.Content)
	case *llm.ToolResultMessage:
		return contentChars(m.Content)
	case *CustomMessage:
		return contentChars(m.Content)
	case *llm.AssistantMessage:
		n := 0
		for _, c := range m.Content {
			switch c := c.(type) {
			case llm.Text:
				n += utf16Len(c.Text)
			case llm.Thinking:
				n += utf16Len(c.Thinking)
			case llm.ToolCall:
				n += utf16Len(c.Name) + c.Arguments.Len()
			}
		}
		return n
	case *BashExecution:
		return utf16Len(m.Command) + utf16Len(m.Output)
	case *BranchSummaryMessage:
		return utf16Len(m.Summary)
	case *CompactionSummaryMessage:
		return utf16Len(m.Summary)
	case *SystemMessage:
		return systemChars(m)
	}
	return 0
}

func contentChars(content []llm.Content) int {
	n := 0
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			n += utf16Len(c.Text)
		case llm.Image:
			n += ImageChars
		}
	}
	return n
}

// ValidUsage returns the usage of m when it can be trusted as a measure of
// the context: m is an assistant message that was neither aborted nor failed
// and whose usage adds up to more than zero tokens.
func ValidUsage(m Message) (llm.Usage, bool) {
	a, ok := m.(*llm.AssistantMessage)
	if !ok || a.StopReason == llm.StopReasonAborted || a.StopReason == llm.StopReasonError {
		return llm.Usage{}, false
	}
	if a.Usage.ContextTokens() <= 0 {
		return llm.Usage{}, false
	}
	return a.Usage, true
}

// ContextEstimate is an estimate of a context's size in tokens.
type ContextEstimate struct {
	// Tokens is UsageTokens plus TrailingTokens.
	Tokens int
	// UsageTokens is the context size the last valid usage reported, or 0.
	UsageTokens int
	// TrailingTokens is the estimate of the messages after that usage (of
	// every message when there is none).
	TrailingTokens int
	// LastUsageIndex is the index of the message carrying that usage, or -1.
	LastUsageIndex int
}

// EstimateContextTokens estimates the size of a conversation: the context
// size reported by the newest valid usage, plus estimates of the messages
// after it; with no valid usage, the estimates of all messages.
func EstimateContextTokens(messages []Message) ContextEstimate {
	for i := len(messages) - 1; i >= 0; i-- {
		if u, ok := ValidUsage(messages[i]); ok {
			est := ContextEstimate{UsageTokens: u.ContextTokens(), LastUsageIndex: i}
			for _, m := range messages[i+1:] {
				est.TrailingTokens += EstimateTokens(m)
			}
			est.Tokens = est.UsageTokens + est.TrailingTokens
			return est
		}
	}
	est := ContextEstimate{LastUsageIndex: -1}
	for _, m := range messages {
		est.TrailingTokens += EstimateTokens(m)
	}
	est.Tokens = est.TrailingTokens
	return est
}

// utf16Len is [llm.UTF16Len].
func utf16Len(s string) int { return llm.UTF16Len(s) }
