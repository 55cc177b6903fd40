package llm

// NoResultText is the text of the synthetic error result given to a tool
// call whose result never arrived.
const NoResultText = "No result provided"

// PrepareMessages is the normalisation every provider applies before
// converting a conversation to its wire format, as pi-ai does:
//   - assistant turns that failed or were aborted are dropped: their partial
//     content may be malformed, and an overflow error kept in the session
//     must not be sent back;
//   - a tool call whose result never arrived gets a synthetic error result
//     ([NoResultText]) right after its assistant turn, since every API
//     rejects a call without a result;
//   - a tool result whose call is not in the preceding assistant turn (its
//     turn was dropped) is dropped too.
//
// The input is not modified.
func PrepareMessages(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	var pending []ToolCall // calls of the last assistant turn still without a result
	answered := map[string]bool{}
	flush := func(ts int64) {
		for _, c := range pending {
			if !answered[c.ID] {
				out = append(out, &ToolResultMessage{
					ToolCallID: c.ID, ToolName: c.Name,
					Content: []Content{Text{Text: NoResultText}},
					IsError: true, Timestamp: ts,
				})
			}
		}
		pending = nil
		clear(answered)
	}
	for _, m := range msgs {
		switch m := m.(type) {
		case *AssistantMessage:
			flush(m.Timestamp)
			if m.StopReason == StopReasonError || m.StopReason == StopReasonAborted {
				continue
			}
			out = append(out, m)
			pending = m.ToolCalls()
		case *ToolResultMessage:
			known := false
			for _, c := range pending {
				if c.ID == m.ToolCallID {
					known = true
					break
				}
			}
			if !known || answered[m.ToolCallID] {
				continue
			}
			answered[m.ToolCallID] = true
			out = append(out, m)
		case *UserMessage:
			flush(m.Timestamp)
			out = append(out, m)
		default:
			out = append(out, m)
		}
	}
	flush(0)
	return out
}

// SameModel reports whether an earlier assistant turn was produced by the
// model about to be called, so provider-specific content (thinking
// signatures) can be sent back as it is rather than converted.
func SameModel(m *AssistantMessage, model Model) bool {
	return m.Provider == model.Provider && m.API == model.API && m.Model == model.ID
}
