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
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	conn, err := io.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newBoundedConn(conn), nil
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

// maxServerRequests bounds the requests of a stdio server awaiting Prime's
// answer. The SDK queues a server's requests without bound, each holding
// memory until answered, and answers cannot be written to a server that
// reads nothing: a server flooding requests (pings) without reading its
// input would make Prime hold every one. Past the bound Prime reads
// nothing more from the server until answers go out; a server that does
// not read its input then gets no further, and its call ends at the
// entry's timeout.
const maxServerRequests = 256

// boundedConn is a connection that stops reading while maxServerRequests
// requests of the server are unanswered.
type boundedConn struct {
	sdk.Connection
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func newBoundedConn(c sdk.Connection) *boundedConn {
	return &boundedConn{Connection: c, slots: make(chan struct{}, maxServerRequests), closed: make(chan struct{})}
}

func (b *boundedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := b.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.IsCall() {
		select {
		case b.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.closed:
			return nil, io.EOF
		}
	}
	return msg, err
}

// Write frees a request's slot once its answer is written (or failed):
// an answer blocked on a server that reads nothing holds its memory until
// then.
func (b *boundedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := b.Connection.Write(ctx, msg)
	if _, ok := msg.(*jsonrpc.Response); ok {
		select {
		case <-b.slots:
		default:
		}
	}
	return err
}

func (b *boundedConn) Close() error {
	b.closeOnce.Do(func() { close(b.closed) })
	return b.Connection.Close()
}
