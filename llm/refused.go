package llm

import (
	"errors"
	"net"
	"regexp"
	"strings"
	"sync"
)

// refusedText matches Go's text for a request whose connection was refused:
// `Post "URL": dial tcp HOST:PORT: connect: connection refused`.
var refusedText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:\w+ "([^"]*)": )?dial tcp (\S+): connect: connection refused$`)
})

// localServers names what usually listens on a local port, for the hint.
var localServers = map[string]string{"11434": "Ollama (ollama serve)", "8080": "llama.cpp (llama-server)", "1234": "LM Studio's server", "8000": "vLLM (vllm serve)"}

// NewConnectionError classifies a transport failure of provider's request
// (a refused connection, a stream broken mid-way) as [ErrConnection]. A
// connection refused by this machine says so in words a user can act on:
// nothing listens at the address, which server to start, or which other
// model to choose; [Retryable] reports it as not worth sending again.
func NewConnectionError(provider string, err error) *APIError {
	msg := err.Error()
	if m := refusedText().FindStringSubmatch(msg); m != nil && loopback(m[2]) {
		target := m[1]
		if target == "" {
			target = m[2]
		}
		_, port, _ := net.SplitHostPort(m[2])
		server := localServers[port]
		if server == "" {
			server = "the model's server"
		}
		msg = "nothing is listening at " + target + " (connection refused): start " + server +
			" there, or choose another model with --model"
	}
	return &APIError{Provider: provider, Message: msg, Kind: ErrConnection}
}

// loopback reports whether a HOST:PORT names this machine.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RefusedLocally reports whether err is a connection a server on this
// machine refused: nothing listens there, and sending the request again
// does not help until the user starts it.
func RefusedLocally(err error) bool {
	var e *APIError
	return errors.As(err, &e) && errors.Is(e.Kind, ErrConnection) &&
		(strings.HasPrefix(e.Message, "nothing is listening at ") || localRefusal(e.Message))
}

// localRefusal reports whether a refusedText message names a loopback address.
func localRefusal(msg string) bool {
	m := refusedText().FindStringSubmatch(msg)
	return m != nil && loopback(m[2])
}
