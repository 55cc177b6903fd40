package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is where a server's connection stands.
type State string

// The states of a server.
const (
	// StateDisabled: the entry says enabled: false, or the user turned it
	// off; nothing is started.
	StateDisabled State = "disabled"
	// StateConnecting: the server is being started and initialized.
	StateConnecting State = "connecting"
	// StateConnected: its tools can be called.
	StateConnected State = "connected"
	// StateFailed: it could not be started or did not initialize; the next
	// call tries again.
	StateFailed State = "failed"
	// StateDisconnected: it was connected and went away (it exited, the
	// connection dropped); the next call starts it again.
	StateDisconnected State = "disconnected"
)

// ErrClosed is returned by calls on a closed [Manager].
var ErrClosed = errors.New("MCP connections are closed")

// ErrDisabled is returned for a call to a server that is turned off.
var ErrDisabled = errors.New("the server is disabled")

// Report tells of a server's state change worth telling the user: a failed
// connection, a server that stopped, tools skipped.
type Report struct {
	Server string
	State  State
	// Message says what happened, in a sentence for the user.
	Message string
}

// Options configure a [Manager].
type Options struct {
	// Version is Prime's version, sent as the client's.
	Version string
	// HTTPClient carries streamable HTTP requests; nil means
	// http.DefaultClient's transport.
	HTTPClient *http.Client
	// Environ is the environment stdio servers start with, their entry's
	// env added; nil means os.Environ().
	Environ []string
	// OnReport, when set, hears the reports as they happen, on the
	// manager's goroutines; it must return quickly.
	OnReport func(Report)
	// MaxResultBytes bounds the text of one tool result the model sees;
	// 0 means DefaultMaxResultBytes.
	MaxResultBytes int
	// TempDir is where the full text of truncated results is saved; empty
	// means the system's temporary directory.
	TempDir string
	// LogFile, when set, is where the servers' log messages (level info
	// and above) are appended, as pi's mcp.log: "TIME [server] level
	// logger: message", the file moved to LogFile.1 past 5 MB.
	LogFile string
}

// Manager owns the connections to the configured servers: it starts them
// in the background, lists their tools, calls them, restarts a server that
// went away on the next call, and stops every server on Close. Its methods
// may be called from any goroutine.
type Manager struct {
	opts Options
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	servers []*server

	// progress holds, for each call under way, what a progress
	// notification with its token does (push its timeout back, tell the
	// caller); tokens counts the tokens given out.
	progressMu sync.Mutex
	progress   map[string]func(*sdk.ProgressNotificationParams)
	tokens     int

	logMu sync.Mutex
}

// server is one configured server and its connection, guarded by
// Manager.mu.
type server struct {
	cfg     Server
	enabled bool
	state   State
	err     error
	// attempt is closed when the connection being made ends (nil when
	// none is being made).
	attempt chan struct{}
	// dialing is the connection being made (its process started, not yet
	// initialized), which Close kills rather than waits for.
	dialing *connection
	conn    *connection
	// tools are the server's tools as last listed, kept while it is
	// disconnected so that a call can start it again.
	tools   []remoteTool
	skipped []string
	// hidden are notes on the tools the entry's exposures hide.
	hidden []string
	// instructions are the server's, from initialize.
	instructions string
}

// NewManager returns a manager for servers; nothing is started until
// [Manager.Start] or a call.
func NewManager(servers []Server, opts Options) *Manager {
	ctx, stop := context.WithCancel(context.Background())
	m := &Manager{opts: opts, ctx: ctx, stop: stop}
	for _, s := range servers {
		st := StateDisconnected
		if !s.Enabled {
			st = StateDisabled
		}
		m.servers = append(m.servers, &server{cfg: s, enabled: s.Enabled, state: st})
	}
	return m
}

// Start begins connecting every enabled server in the background; it does
// not wait.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		if s.enabled && s.conn == nil {
			m.connectLocked(s)
		}
	}
}

// Wait waits until no server is connecting (each is connected, failed or
// disabled), or ctx is done.
func (m *Manager) Wait(ctx context.Context) error {
	for {
		m.mu.Lock()
		var pending chan struct{}
		for _, s := range m.servers {
			if s.attempt != nil {
				pending = s.attempt
				break
			}
		}
		m.mu.Unlock()
		if pending == nil {
			return nil
		}
		select {
		case <-pending:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops every server and waits for the manager's goroutines.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.stop()
	var conns []*connection
	for _, s := range m.servers {
		if s.dialing != nil {
			// Never initialized: nothing to close gracefully, and a
			// server that does not answer would hold Prime's exit.
			s.dialing.killGroup()
		}
		if s.conn != nil {
			conns = append(conns, s.conn)
			s.conn = nil
		}
	}
	m.mu.Unlock()
	var errs []error
	for _, c := range conns {
		if err := c.close(); err != nil {
			errs = append(errs, err)
		}
	}
	m.wg.Wait()
	return errors.Join(errs...)
}

func (m *Manager) find(name string) *server {
	for _, s := range m.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

func (m *Manager) report(name string, st State, msg string) {
	if m.opts.OnReport != nil {
		m.opts.OnReport(Report{Server: name, State: st, Message: msg})
	}
}

// connectLocked starts a connection attempt for s unless one is under way,
// and returns the channel closed when it ends.
func (m *Manager) connectLocked(s *server) chan struct{} {
	if s.attempt != nil {
		return s.attempt
	}
	done := make(chan struct{})
	s.attempt, s.state, s.err = done, StateConnecting, nil
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.dial(s, done)
	}()
	return done
}

// dial makes one connection to s and lists its tools.
func (m *Manager) dial(s *server, done chan struct{}) {
	m.mu.Lock()
	cfg := s.cfg
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(m.ctx, cfg.Timeout)
	defer cancel()
	c, err := m.open(ctx, cfg, s)
	var tools []remoteTool
	var skipped, hidden []string
	if err == nil {
		tools, skipped, hidden, err = c.listTools(ctx, cfg)
		if err != nil {
			err = fmt.Errorf("listing its tools: %w", err)
		}
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded && m.ctx.Err() == nil {
		err = fmt.Errorf("no answer within %v (the entry's timeout): %w", cfg.Timeout, err)
	}
	m.mu.Lock()
	s.attempt = nil
	defer close(done)
	if m.closed || !s.enabled {
		m.mu.Unlock()
		if c != nil {
			c.close()
		}
		return
	}
	if err != nil {
		if c != nil {
			defer c.close()
		}
		s.state, s.err = StateFailed, withStderr(err, c)
		msg := fmt.Sprintf("MCP server %s did not connect: %v", cfg.Name, s.err)
		m.mu.Unlock()
		m.report(cfg.Name, StateFailed, msg)
		return
	}
	s.conn, s.state, s.tools, s.skipped, s.hidden = c, StateConnected, tools, skipped, hidden
	s.instructions = c.instructions()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.watch(s, c)
	}()
	m.mu.Unlock()
	for _, sk := range skipped {
		m.report(cfg.Name, StateConnected, fmt.Sprintf("MCP server %s: %s", cfg.Name, sk))
	}
}

// watch waits for the connection to end by itself and says so.
func (m *Manager) watch(s *server, c *connection) {
	err := c.sess.Wait()
	m.mu.Lock()
	mine := s.conn == c
	m.mu.Unlock()
	if !mine {
		return // closed on purpose, or by a call that saw it go
	}
	c.closeAfter(err) // waits for the process, so its stderr is all read
	m.mu.Lock()
	if s.conn != c {
		m.mu.Unlock()
		return
	}
	s.conn, s.state = nil, StateDisconnected
	why := c.ending(err)
	s.err = withStderr(errors.New("the server "+why), c)
	msg := fmt.Sprintf("MCP server %s %s; it is started again on the next call", s.cfg.Name, why)
	m.mu.Unlock()
	m.report(s.cfg.Name, StateDisconnected, msg)
}

// session returns a live connection to s, starting one when there is none:
// a server that failed or went away is tried once more.
func (m *Manager) session(ctx context.Context, s *server) (*connection, error) {
	tried := false
	for {
		m.mu.Lock()
		switch {
		case m.closed:
			m.mu.Unlock()
			return nil, ErrClosed
		case !s.enabled:
			m.mu.Unlock()
			return nil, fmt.Errorf("MCP server %s: %w (enable it with /mcp enable %s)", s.cfg.Name, ErrDisabled, s.cfg.Name)
		case s.conn != nil:
			c := s.conn
			m.mu.Unlock()
			return c, nil
		case s.attempt == nil && tried:
			err := s.err
			m.mu.Unlock()
			return nil, fmt.Errorf("MCP server %s is not connected: %w", s.cfg.Name, err)
		}
		if s.attempt == nil {
			tried = true
		}
		done := m.connectLocked(s)
		m.mu.Unlock()
		select {
		case <-done:
			tried = true
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Reconnect closes the connection to the server name, if any, and connects
// again, waiting for the outcome.
func (m *Manager) Reconnect(ctx context.Context, name string) error {
	m.mu.Lock()
	s := m.find(name)
	if s == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w %q", ErrNoServer, name)
	}
	if !s.enabled {
		m.mu.Unlock()
		return fmt.Errorf("MCP server %s: %w", name, ErrDisabled)
	}
	old := s.conn
	s.conn, s.state = nil, StateDisconnected
	m.mu.Unlock()
	if old != nil {
		old.close()
	}
	m.mu.Lock()
	if s.attempt == nil {
		s.err = nil
	}
	m.mu.Unlock()
	_, err := m.session(ctx, s)
	return err
}

// SetEnabled turns the server name on (it starts connecting) or off (its
// connection is closed and its tools leave the list), for this manager
// only; [SetEnabled] saves the choice in a file.
func (m *Manager) SetEnabled(name string, on bool) error {
	m.mu.Lock()
	s := m.find(name)
	if s == nil {
		m.mu.Unlock()
		return fmt.Errorf("%w %q", ErrNoServer, name)
	}
	s.enabled = on
	var old *connection
	if on {
		if s.conn == nil && !m.closed {
			m.connectLocked(s)
		}
	} else {
		old, s.conn, s.state, s.err = s.conn, nil, StateDisabled, nil
	}
	m.mu.Unlock()
	if old != nil {
		return old.close()
	}
	return nil
}

// withStderr adds the end of a stdio server's standard error to err.
func withStderr(err error, c *connection) error {
	if c == nil || c.stderr == nil {
		return err
	}
	if tail := strings.TrimSpace(c.stderr.String()); tail != "" {
		return fmt.Errorf("%w; its stderr ends: %s", err, lastLines(tail, 5))
	}
	return err
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// terminateWait is how long a stdio server has to exit after its input is
// closed before it is sent SIGTERM (and as long again before SIGKILL).
const terminateWait = 2 * time.Second

func (m *Manager) environ() []string {
	if m.opts.Environ != nil {
		return m.opts.Environ
	}
	return os.Environ()
}

// open starts a connection to cfg (the server's process, for stdio).
func (m *Manager) open(ctx context.Context, cfg Server, s *server) (*connection, error) {
	version := m.opts.Version
	if version == "" {
		version = "dev"
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "prime", Version: version}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { m.refreshTools(s) },
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			m.progressed(r.Params)
		},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			m.log(cfg.Name, r.Params)
		},
	})
	c := &connection{}
	cfg, err := runValueCommands(ctx, cfg)
	if err != nil {
		return c, err
	}
	var t sdk.Transport
	switch cfg.Transport {
	case TransportStdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Env = append(append([]string(nil), m.environ()...), cfg.Env...)
		cmd.Dir = cfg.Dir
		c.stderr = &tail{max: 8 << 10}
		cmd.Stderr = c.stderr
		ownGroup(cmd)
		c.cmd = cmd
		t = &commandTransport{cmd: cmd, terminate: terminateWait, started: func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			s.dialing = c
			if m.closed {
				c.killGroup()
			}
		}}
	default:
		hc := m.opts.HTTPClient
		if hc == nil {
			hc = http.DefaultClient
		}
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		if len(cfg.Headers) > 0 {
			base = headerTransport{base: base, headers: cfg.Headers, origin: origin(cfg.URL)}
		}
		limited := *hc
		limited.Transport = limitBodies{base: base}
		t = &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: &limited, MaxRetries: 2, MaxEventSize: MaxMessageBytes}
	}
	sess, err := client.Connect(ctx, t, nil)
	m.mu.Lock()
	s.dialing = nil
	m.mu.Unlock()
	if err != nil {
		c.killGroup()
		return c, err
	}
	c.sess = sess
	if init := sess.InitializeResult(); m.opts.LogFile != "" && init != nil && init.Capabilities != nil && init.Capabilities.Logging != nil {
		// Servers send log messages once asked for a level. The request is
		// deprecated by the newest protocol, which servers still accept.
		_ = sess.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: logLevel}) //nolint:staticcheck
	}
	return c, nil
}

// watchProgress registers what progress notifications for a new token do;
// the returned function unregisters it.
func (m *Manager) watchProgress(f func(*sdk.ProgressNotificationParams)) (string, func()) {
	m.progressMu.Lock()
	defer m.progressMu.Unlock()
	m.tokens++
	token := fmt.Sprintf("prime-%d", m.tokens)
	if m.progress == nil {
		m.progress = map[string]func(*sdk.ProgressNotificationParams){}
	}
	m.progress[token] = f
	return token, func() {
		m.progressMu.Lock()
		defer m.progressMu.Unlock()
		delete(m.progress, token)
	}
}

func (m *Manager) progressed(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	m.progressMu.Lock()
	f := m.progress[fmt.Sprint(p.ProgressToken)]
	m.progressMu.Unlock()
	if f != nil {
		f(p)
	}
}

// refreshTools lists the tools again after the server said they changed.
func (m *Manager) refreshTools(s *server) {
	m.mu.Lock()
	c := s.conn
	if c == nil || m.closed {
		m.mu.Unlock()
		return
	}
	timeout := s.cfg.Timeout
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(m.ctx, timeout)
		defer cancel()
		tools, skipped, hidden, err := c.listTools(ctx, s.cfg)
		if err != nil {
			return
		}
		m.mu.Lock()
		if s.conn == c {
			s.tools, s.skipped, s.hidden = tools, skipped, hidden
		}
		m.mu.Unlock()
	}()
}

// headerTransport adds the entry's headers to every request to the
// entry's own server (origin, "scheme://host:port"), and to no other: the
// headers usually carry a token, and a redirect to another server must
// not take it along.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if origin(r.URL.String()) != h.origin {
		return h.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// origin is a URL's scheme and host ("https://example.com:8443"), "" for
// one that does not parse.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
