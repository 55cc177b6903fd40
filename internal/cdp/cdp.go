// Package cdp drives a real headless Chromium from tests over the Chrome
// DevTools Protocol: the browser is started with --remote-debugging-pipe
// and spoken to on that pipe (NUL-terminated JSON messages), so no port
// and no WebSocket library are needed. It knows only what Prime's tests
// use: open a page, evaluate script, send input, watch console messages,
// exceptions and network requests, take screenshots.
package cdp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrNoBrowser means no Chromium binary was found.
var ErrNoBrowser = errors.New("no chromium binary found (install Debian's chromium package)")

// Find returns the path of a Chromium binary: $PRIME_CHROMIUM, else the
// first of chromium, chromium-browser, google-chrome on $PATH.
func Find() (string, error) {
	if p := os.Getenv("PRIME_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// Browser is a running headless Chromium.
type Browser struct {
	cmd  *exec.Cmd
	in   *os.File // commands to the browser
	out  *os.File // its answers and events
	dir  string   // the fresh profile
	mu   sync.Mutex
	next int64
	wait map[int64]chan message
	// events receives every event; handlers are called on the reader
	// goroutine.
	handlers []func(Event)
	done     chan struct{}
}

// Event is a protocol event.
type Event struct {
	Method    string         `json:"method"`
	Params    jsontext.Value `json:"params"`
	SessionID string         `json:"sessionId"`
}

type message struct {
	ID        int64          `json:"id"`
	Method    string         `json:"method"`
	Params    jsontext.Value `json:"params"`
	Result    jsontext.Value `json:"result"`
	SessionID string         `json:"sessionId"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Launch starts a headless browser with a fresh profile in a temporary
// directory, isolated from the network services a browser starts on its
// own. Close ends it.
func Launch(ctx context.Context, binary string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "prime-chromium-")
	if err != nil {
		return nil, err
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--force-color-profile=srgb",
		"--user-data-dir="+dir, "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	cmdR.Close()
	outW.Close()
	b := &Browser{cmd: cmd, in: cmdW, out: outR, dir: dir, wait: map[int64]chan message{}, done: make(chan struct{})}
	go b.read()
	return b, nil
}

// read delivers answers and events until the pipe closes.
func (b *Browser) read() {
	defer close(b.done)
	r := bufio.NewReaderSize(b.out, 1<<20)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.wait {
				close(ch)
				delete(b.wait, id)
			}
			b.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.wait[m.ID]
			delete(b.wait, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		b.mu.Lock()
		hs := append([]func(Event){}, b.handlers...)
		b.mu.Unlock()
		for _, h := range hs {
			h(Event{Method: m.Method, Params: m.Params, SessionID: m.SessionID})
		}
	}
}

// OnEvent calls h for every event from now on.
func (b *Browser) OnEvent(h func(Event)) {
	b.mu.Lock()
	b.handlers = append(b.handlers, h)
	b.mu.Unlock()
}

// Call sends a command (to the page of sessionID, or the browser when it
// is "") and decodes its result into result (when not nil).
func (b *Browser) Call(ctx context.Context, sessionID, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ch := make(chan message, 1)
	b.mu.Lock()
	b.next++
	id := b.next
	b.wait[id] = ch
	b.mu.Unlock()
	req := struct {
		ID        int64          `json:"id"`
		Method    string         `json:"method"`
		Params    jsontext.Value `json:"params"`
		SessionID string         `json:"sessionId,omitzero"`
	}{id, method, p, sessionID}
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(line, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.wait, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case <-b.done:
		select {
		case m, ok := <-ch:
			if ok {
				return answer(method, m, result)
			}
		default:
		}
		return fmt.Errorf("%s: the browser went away", method)
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the browser went away", method)
		}
		return answer(method, m, result)
	}
}

// answer decodes a command's answer into result (when not nil).
func answer(method string, m message, result any) error {
	if m.Error != nil {
		return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
	}
	if result != nil && len(m.Result) > 0 {
		return json.Unmarshal(m.Result, result)
	}
	return nil
}

// Close ends the browser and removes its profile.
func (b *Browser) Close() error {
	b.in.Close()
	if b.cmd.Process != nil {
		b.cmd.Process.Kill()
	}
	err := b.cmd.Wait()
	<-b.done
	b.out.Close()
	os.RemoveAll(b.dir)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil // killed: expected
	}
	return err
}
