package compaction

import (
	"fmt"
	"testing"

	"github.com/prime-agent/prime/llm"
)

func TestOverflowOf(t *testing.T) {
	model := &llm.Model{Provider: "p", ID: "m", ContextWindow: 10000, MaxTokens: 1000}
	reply := func(stop llm.StopReason, u llm.Usage, text string) *llm.AssistantMessage {
		return &llm.AssistantMessage{Provider: "p", Model: "m", StopReason: stop, Usage: u, ErrorMessage: text}
	}
	overflowText := "prompt is too long: 210000 tokens > 200000 maximum"
	tests := []struct {
		name  string
		reply *llm.AssistantMessage
		model *llm.Model
		err   error
		want  Overflow
	}{
		{"a reply that fitted", reply(llm.StopReasonStop, llm.Usage{Input: 9000, Output: 100}, ""), model, nil, NoOverflow},
		{"no reply", nil, model, nil, NoOverflow},
		{"no model", reply(llm.StopReasonStop, llm.Usage{Input: 20000}, ""), nil, nil, NoOverflow},
		{"input over the window, accepted", reply(llm.StopReasonStop, llm.Usage{Input: 8000, CacheRead: 2500}, ""), model, nil, SilentOverflow},
		{"over a window no one knows", reply(llm.StopReasonStop, llm.Usage{Input: 20000}, ""), &llm.Model{Provider: "p", ID: "m"}, nil, NoOverflow},
		{"another model's reply", &llm.AssistantMessage{Provider: "p", Model: "other", StopReason: llm.StopReasonStop, Usage: llm.Usage{Input: 20000}}, model, nil, NoOverflow},
		{"refused: the classified error", reply(llm.StopReasonError, llm.Usage{}, "bad request"), model, fmt.Errorf("send: %w", llm.ErrContextOverflow), ContextOverflow},
		{"refused: the wording, read back from a file", reply(llm.StopReasonError, llm.Usage{}, overflowText), model, nil, ContextOverflow},
		{"a rate limit in overflow's words is none", reply(llm.StopReasonError, llm.Usage{}, "rate limit: too many tokens per minute"), model, nil, NoOverflow},
		{"another failure", reply(llm.StopReasonError, llm.Usage{}, "overloaded"), model, nil, NoOverflow},
		{"cut off at once with a full context", reply(llm.StopReasonLength, llm.Usage{Input: 9950}, ""), model, nil, ContextOverflow},
		{"cut off by a full context", reply(llm.StopReasonLength, llm.Usage{Input: 9000, Output: 500}, ""), model, nil, CutOff},
		{"cut off by the output limit", reply(llm.StopReasonLength, llm.Usage{Input: 2000, Output: 1000}, ""), model, nil, NoOverflow},
		{"aborted", reply(llm.StopReasonAborted, llm.Usage{Input: 20000}, ""), model, nil, NoOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OverflowOf(tt.reply, tt.model, tt.err); got != tt.want {
				t.Errorf("OverflowOf = %d, want %d", got, tt.want)
			}
		})
	}
}
