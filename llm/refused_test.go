package llm

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestRefusedLocally: a connection refused by this machine (asked of the
// real kernel: a port nothing listens on) is not retried and says what to
// start; a refusal elsewhere, or another broken connection, stays a
// transient failure with Go's own text.
func TestRefusedLocally(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, dialErr := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader("{}"))
	if dialErr == nil {
		t.Fatal("the request to a closed port succeeded")
	}
	e := NewConnectionError("fake", dialErr)
	want := "nothing is listening at http://" + addr + "/v1/chat/completions (connection refused): start the model's server there, or choose another model with --model"
	if e.Message != want || !errors.Is(e, ErrConnection) || !RefusedLocally(e) || Retryable(e) {
		t.Errorf("refused on loopback: %q (refused locally %v, retryable %v)\nwant %q", e.Message, RefusedLocally(e), Retryable(e), want)
	}

	tests := []struct {
		text    string
		message string // "" when the text stays as it is
	}{
		{`Post "http://127.0.0.1:11434/v1/chat/completions": dial tcp 127.0.0.1:11434: connect: connection refused`,
			"nothing is listening at http://127.0.0.1:11434/v1/chat/completions (connection refused): start Ollama (ollama serve) there, or choose another model with --model"},
		{`Post "http://localhost:8080/v1/chat/completions": dial tcp [::1]:8080: connect: connection refused`,
			"nothing is listening at http://localhost:8080/v1/chat/completions (connection refused): start llama.cpp (llama-server) there, or choose another model with --model"},
		{`dial tcp 127.0.0.2:9: connect: connection refused`,
			"nothing is listening at 127.0.0.2:9 (connection refused): start the model's server there, or choose another model with --model"},
		{`Post "http://10.1.2.3:8000/v1/chat/completions": dial tcp 10.1.2.3:8000: connect: connection refused`, ""},
		{`Post "http://127.0.0.1:8000/v1": read tcp 127.0.0.1:5000->127.0.0.1:8000: read: connection reset by peer`, ""},
		{`unexpected EOF`, ""},
	}
	for _, tc := range tests {
		e := NewConnectionError("p", errors.New(tc.text))
		local := tc.message != ""
		if !local {
			tc.message = tc.text
		}
		if e.Message != tc.message || RefusedLocally(e) != local || Retryable(e) == local {
			t.Errorf("%s:\n got %q (refused locally %v, retryable %v)\nwant %q", tc.text, e.Message, RefusedLocally(e), Retryable(e), tc.message)
		}
	}
}
