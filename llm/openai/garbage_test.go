package openai_test

import (
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestGarbageBody: a 200 answer that is not the promised stream (a proxy's
// HTML page, a chunk that is not JSON, a stream that stops before its
// finish reason) ends the turn as a failure the caller can act on, never as
// a successful empty answer.
func TestGarbageBody(t *testing.T) {
	for _, raw := range []string{
		"<html><body>502 Bad Gateway</body></html>",
		"data: {not json}\n\n",
		`data: {"choices":[{"delta":{"content":"half an answer"}}]}` + "\n\n",
	} {
		srv := newServer(t)
		srv.Queue(llmtest.Reply{Raw: raw})
		msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
		if err == nil || msg == nil || msg.StopReason != llm.StopReasonError || msg.ErrorMessage == "" || llm.IsAborted(err) {
			t.Errorf("%q: message %+v, err %v; want a failed turn", raw, msg, err)
		}
	}
}
