package openai_test

import (
	"strings"
	"testing"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestGatewayPage: a gateway's 200 text/html page is not retried (it would
// come again) and the error names the content type and quotes the page.
func TestGatewayPage(t *testing.T) {
	srv := newServer(t)
	srv.Queue(llmtest.Reply{ContentType: "text/html; charset=utf-8", Raw: "<html>\n<head><title>Sign in to the corporate proxy</title></head></html>"})
	msg, err := llm.Complete(t.Context(), srv.Provider(), request(srv))
	if err == nil || llm.Retryable(err) {
		t.Fatalf("err %v (retryable %v), want a failure not retried", err, llm.Retryable(err))
	}
	want := "the server answered with a text/html page, not an event stream (a gateway or proxy in the way?): <html> <head><title>Sign in to the corporate proxy</title></head></html>"
	if !strings.Contains(err.Error(), want) || msg == nil || !strings.Contains(msg.ErrorMessage, "text/html") {
		t.Errorf("err %q, message %+v; want %q", err, msg, want)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
