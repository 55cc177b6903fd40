package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageBytes bounds one message a server sends: a stdio line, a
// streamable HTTP response body or server-sent event. A server past it
// has its connection closed, so that a broken or hostile server cannot
// make Prime hold an endless message in memory. 32 MB holds a result with
// images of some 20 MB (base64 in JSON); the SDK's own bound, 16 MB, held
// too little for that.
const MaxMessageBytes = 32 << 20

// MessageTooLargeError is the error of a connection whose server sent a
// message over the limit.
type MessageTooLargeError struct {
	// Limit is the bound passed, in bytes.
	Limit int
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("it sent a message over the %d MB limit", e.Limit>>20)
}

// lineReader is a stdio server's output, bounded per line (a message is
// one line). Only the read loop of its connection reads it.
type lineReader struct {
	r     io.Reader
	limit int
	n     int // bytes of the current line read
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, &MessageTooLargeError{Limit: l.limit}
	}
	// Never read far past the limit: at most one byte over it.
	if room := l.limit - l.n + 1; len(p) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		l.n = n - 1 - i
	} else {
		l.n += n
	}
	if l.n > l.limit {
		return 0, &MessageTooLargeError{Limit: l.limit}
	}
	return n, err
}

// commandTransport runs a stdio server, as the SDK's CommandTransport does
// (its input closed to stop it, then SIGTERM and SIGKILL), with its output
// bounded by MaxMessageBytes a line, and says when the process started.
type commandTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	started   func()
}

func (t *commandTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	t.started()
	// The output is closed by Wait, once the process has exited.
	out := &lineReader{r: stdout, limit: MaxMessageBytes}
	io := &sdk.IOTransport{Reader: io.NopCloser(out), Writer: &processInput{cmd: t.cmd, stdin: stdin, terminate: t.terminate},
		MaxLineLength: -1}
	return io.Connect(ctx)
}

// processInput is a stdio server's input; closing it stops the server.
type processInput struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	terminate time.Duration
}

func (p *processInput) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes the server's input and waits for it to exit; one that does
// not is sent SIGTERM, then SIGKILL, each after the terminate wait.
func (p *processInput) Close() error {
	closeErr := p.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			_ = p.cmd.Process.Signal(sig)
		}
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil // how it ended is reported from ProcessState
			}
			return errors.Join(closeErr, err)
		case <-time.After(p.terminate):
		}
	}
	return errors.New("the server's process did not end after SIGKILL")
}

// limitBodies bounds the bodies of a streamable HTTP server's responses
// other than event streams (whose events the SDK bounds one by one) to
// MaxMessageBytes.
type limitBodies struct {
	base http.RoundTripper
}

func (l limitBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if !strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream") {
		resp.Body = &limitedBody{rc: resp.Body, left: MaxMessageBytes}
	}
	return resp, nil
}

// limitedBody fails a read past its limit with MessageTooLargeError.
type limitedBody struct {
	rc   io.ReadCloser
	left int
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &MessageTooLargeError{Limit: MaxMessageBytes}
	}
	if len(p) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= n
	if b.left < 0 {
		return 0, &MessageTooLargeError{Limit: MaxMessageBytes}
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
