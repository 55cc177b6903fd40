package rpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/agentjson"
)

// Options configure a [Server].
type Options struct {
	// Stderr receives the diagnostics, one line each: the agent's notices,
	// hooks that failed, an event that could not be encoded, a setting
	// that could not be saved. Nil discards them.
	Stderr io.Writer
	// AbortAtEOF makes the end of input stop the agent at once, as pi does,
	// instead of letting it finish the run and the queued messages first;
	// the queued messages it drops are reported in a queue_dropped line.
	AbortAtEOF bool
}

// MaxLineBytes is the longest command line read (32 MiB, what a model
// provider accepts as a whole request); a longer one is answered with a
// parse failure, and skipped without being held in memory.
const MaxLineBytes = 32 << 20

// Server speaks pi's RPC protocol for one agent: commands in from a
// reader, responses and the agent's events out to a writer, one JSON object
// per line. Make it with [New], give its [Server.Event] to the agent as
// Config.Events, and run [Server.Serve].
type Server struct {
	opts Options

	// wmu serializes the lines written to out; werr is the first write
	// error (later lines are dropped) and failed is closed when it happens.
	wmu      sync.Mutex
	out      io.Writer
	werr     error
	failed   chan struct{}
	failOnce sync.Once

	// dmu serializes the lines of diagnostics.
	dmu sync.Mutex

	ag *agent.Agent
	// ops counts the compactions and navigations under way, tasks every
	// goroutine a command started (ops and user commands).
	ops   sync.WaitGroup
	tasks sync.WaitGroup
	// ui are the approval dialogs waiting for the client (approval.go).
	ui uiRequests
}

// New returns a server that writes its lines to out.
func New(out io.Writer, opts Options) *Server {
	return &Server{opts: opts, out: out, failed: make(chan struct{})}
}

// Event writes an agent event as its protocol line (agentjson.MarshalEvent).
// Events pi has no line for are left out, except notices and hook failures,
// which go to Stderr. It is safe to call from any goroutine, before and
// during Serve.
func (s *Server) Event(e agent.Event) {
	switch e := e.(type) {
	case agent.Notice:
		s.diag("%s: %s", e.Level, e.Text)
		return
	case agent.ApprovalAsked:
		s.askApproval(e.Request)
		return
	case agent.ApprovalSettled:
		s.approvalSettled(e)
		return
	case *agent.Progress:
		if e.Kind == agent.ProgressHookReport && e.HookReport != nil {
			s.diag("%v", e.HookReport)
		}
	}
	line, ok, err := agentjson.MarshalEvent(e)
	if err != nil {
		s.diag("cannot encode a %s event: %v", e.EventType(), err)
		return
	}
	if ok {
		s.write(line)
	}
}

// diag writes one line of diagnostics.
func (s *Server) diag(format string, args ...any) {
	if s.opts.Stderr != nil {
		s.dmu.Lock()
		defer s.dmu.Unlock()
		fmt.Fprintf(s.opts.Stderr, "prime: "+format+"\n", args...)
	}
}

// write writes one line (a newline is added) unless a write failed before.
func (s *Server) write(line []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.werr != nil {
		return
	}
	if _, err := s.out.Write(append(line, '\n')); err != nil { // one Write a line
		s.werr = fmt.Errorf("writing to the client: %w", err)
		s.failOnce.Do(func() { close(s.failed) })
	}
}

// respond writes a success response with data (nil: none).
func (s *Server) respond(c *command, data []byte) {
	b := make([]byte, 0, len(data)+len(c.id)+len(c.typ)+64) // the line and its newline, without growing
	s.write(appendResponse(b, c.id, c.typ, true, data, ""))
}

// refuse writes a failure response.
func (s *Server) refuse(id jsontext.Value, command, text string) {
	s.write(appendResponse(nil, id, command, false, nil, text))
}

// textStopping answers the commands that arrive once the server shuts down.
const textStopping = "the agent is shutting down; the command was not run"

// Serve reads commands from in, one per line, and handles them for ag until
// in ends, ctx is done or a write fails. Commands are started in the order
// they arrive; the long ones (compact, navigate_tree, bash) go on while the
// next are read and handled, and are answered when they end.
//
// When in ends (EOF) the commands read so far are started, then the agent
// is aborted (its run, a compaction, a user command), Serve waits for what
// the commands started to end and answer, and returns nil. When ctx is done
// (SIGTERM, SIGHUP) it does the same at once, answers the lines still
// arriving with a failure, and returns ctx's error. A failed write ends it
// likewise and returns the error. Serve may be called once.
//
// in is read on a goroutine that ends when in returns an error or EOF;
// after a cancelled Serve, close in to end it.
func (s *Server) Serve(ctx context.Context, ag *agent.Agent, in io.Reader) error {
	s.ag = ag
	// What the commands start (a compaction, a user command) is stopped
	// by the shutdown, even when it began after the agent was aborted.
	cmdCtx, stopCommands := context.WithCancel(ctx)
	defer stopCommands()
	lines := make(chan inLine)
	quit := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(lines)
		readLines(in, lines, quit)
	}()

	var err error
	eof := false
loop:
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				eof = true
				break loop
			}
			s.handleLine(cmdCtx, line)
		case <-ctx.Done():
			err = context.Cause(ctx)
			break loop
		case <-s.failed:
			break loop
		}
	}

	// Shut down: nothing new starts, lines still arriving are refused,
	// and everything under way is stopped and answered.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					return
				}
				if line.over > 0 {
					s.refuseLong(line.over)
				} else {
					s.refuseLine(line.data)
				}
			case <-quit:
				return
			}
		}
	}()
	var finished <-chan struct{} // the end of finish's watch, when it ran
	if eof && !s.opts.AbortAtEOF {
		var e error
		if finished, e = s.finish(ctx, ag); e != nil {
			err = e
		}
	}
	stopCommands()
	ag.Abort()
	ag.AbortBash()
	s.tasks.Wait()
	if finished != nil {
		<-finished
	}
	if eof && s.opts.AbortAtEOF {
		s.reportDropped(ag)
	}
	close(quit)
	<-drained
	if eof {
		<-readDone
	}
	s.wmu.Lock()
	werr := s.werr
	s.wmu.Unlock()
	if werr != nil {
		return werr
	}
	return err
}

// inLine is one line of input, or (over > 0) the size of a line longer
// than MaxLineBytes, which was skipped.
type inLine struct {
	data []byte
	over int64
}

// readLines sends the lines of in to lines until in ends or quit is
// closed: LF-terminated, a trailing CR removed, a last line without a
// newline included, empty lines skipped. A line longer than MaxLineBytes
// is read through in bounded pieces and sent only as its size.
func readLines(in io.Reader, lines chan<- inLine, quit <-chan struct{}) {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	var over int64 // bytes of the current line, once it is too long
	for {
		piece, err := br.ReadSlice('\n')
		if over == 0 && len(buf)+len(piece) > MaxLineBytes+2 { // room for CR LF
			over, buf = int64(len(buf)), nil
		}
		if over > 0 {
			over += int64(len(piece))
		} else {
			buf = append(buf, piece...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		var l inLine
		if over > 0 {
			l.over = over
		} else {
			l.data = bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
			if len(l.data) > MaxLineBytes {
				l.over, l.data = int64(len(l.data)), nil
			}
		}
		buf, over = nil, 0
		if len(l.data) > 0 || l.over > 0 {
			select {
			case lines <- l:
			case <-quit:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// handleLine runs the command on one line, or refuses a line too long.
func (s *Server) handleLine(ctx context.Context, l inLine) {
	if l.over > 0 {
		s.refuseLong(l.over)
		return
	}
	s.handle(ctx, l.data)
}

// refuseLong answers a line longer than MaxLineBytes.
func (s *Server) refuseLong(n int64) {
	s.refuse(nil, "parse", fmt.Sprintf("Failed to parse command: the line is %d bytes, more than the %d a command may have", n, MaxLineBytes))
}

// finish lets the agent end what the commands read before the end of input
// started: the run with its queued messages, a compaction, a user command.
// It returns ctx's error when a signal or a failed write cuts the wait
// short (the shutdown that follows aborts what runs), and a channel closed
// once its watch has ended.
func (s *Server) finish(ctx context.Context, ag *agent.Agent) (<-chan struct{}, error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			s.tasks.Wait()
			if ag.Wait(ctx) != nil || !ag.Busy() {
				return
			}
		}
	}()
	select {
	case <-done:
		return done, nil
	case <-ctx.Done():
	case <-s.failed:
	}
	return done, context.Cause(ctx)
}

// reportDropped writes the queued messages an abort at the end of input
// left undelivered: {"type":"queue_dropped","steering":[...],"followUp":[...]}.
func (s *Server) reportDropped(ag *agent.Agent) {
	steering, followUp := ag.ClearQueue()
	if len(steering)+len(followUp) == 0 {
		return
	}
	line, err := marshalDropped(steering, followUp)
	if err != nil {
		s.diag("cannot encode the dropped messages: %v", err)
		return
	}
	s.write(line)
}

// refuseLine answers a line that arrived during the shutdown.
func (s *Server) refuseLine(line []byte) {
	c, err := parseCommand(line)
	var pe *parseError
	if errors.As(err, &pe) {
		var id jsontext.Value
		if c != nil {
			id = c.id
		}
		s.refuse(id, "parse", err.Error())
		return
	}
	s.refuse(c.id, c.typ, textStopping)
}

// handle runs the command on one line.
func (s *Server) handle(ctx context.Context, line []byte) {
	c, err := parseCommand(line)
	if err != nil {
		var id jsontext.Value
		if c != nil {
			id = c.id
		}
		s.refuse(id, "parse", err.Error())
		return
	}
	h, ok := lookup(c.typ)
	if !ok {
		s.refuse(c.id, c.typ, "Unknown command: "+c.typ)
		return
	}
	data, err := h(s, ctx, c)
	switch {
	case errors.Is(err, errAnswered):
	case err != nil:
		s.refuse(c.id, c.typ, errorText(err))
	default:
		s.respond(c, data)
	}
}

// errAnswered is what a handler returns when it answers, or will answer,
// the command itself.
var errAnswered = errors.New("answered by the handler")

// later runs f on a goroutine of the server's and answers the command with
// its result when it ends; op marks a compaction or navigation, which abort
// waits for.
func (s *Server) later(c *command, op bool, f func() ([]byte, error)) error {
	s.tasks.Add(1)
	if op {
		s.ops.Add(1)
	}
	go func() {
		defer s.tasks.Done()
		if op {
			defer s.ops.Done()
		}
		data, err := f()
		if err != nil {
			s.refuse(c.id, c.typ, errorText(err))
			return
		}
		s.respond(c, data)
	}()
	return errAnswered
}
