package cdp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Page is a tab of the browser, with what it logged and requested.
type Page struct {
	b  *Browser
	id string // the session attached to the tab
	mu sync.Mutex
	// problems are console errors, warnings and uncaught exceptions;
	// requests every URL the page asked for.
	problems []string
	requests []string
	loaded   chan struct{}
}

// NewPage opens a blank tab and starts watching it.
func (b *Browser) NewPage(ctx context.Context) (*Page, error) {
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &t); err != nil {
		return nil, err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &s); err != nil {
		return nil, err
	}
	p := &Page{b: b, id: s.SessionID, loaded: make(chan struct{}, 1)}
	b.OnEvent(p.event)
	for _, domain := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := b.Call(ctx, p.id, domain, nil, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *Page) event(e Event) {
	if e.SessionID != p.id {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Method {
	case "Page.loadEventFired":
		select {
		case p.loaded <- struct{}{}:
		default:
		}
	case "Runtime.consoleAPICalled":
		var c struct {
			Type string           `json:"type"`
			Args []jsontext.Value `json:"args"`
		}
		if json.Unmarshal(e.Params, &c) == nil && (c.Type == "error" || c.Type == "warning" || c.Type == "assert") {
			p.problems = append(p.problems, fmt.Sprintf("console.%s: %s", c.Type, c.Args))
		}
	case "Runtime.exceptionThrown":
		p.problems = append(p.problems, "exception: "+string(e.Params))
	case "Log.entryAdded":
		var l struct {
			Entry struct {
				Level string `json:"level"`
				Text  string `json:"text"`
			} `json:"entry"`
		}
		if json.Unmarshal(e.Params, &l) == nil && (l.Entry.Level == "error" || l.Entry.Level == "warning") {
			p.problems = append(p.problems, "log "+l.Entry.Level+": "+l.Entry.Text)
		}
	case "Network.requestWillBeSent":
		var r struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(e.Params, &r) == nil {
			p.requests = append(p.requests, r.Request.URL)
		}
	}
}

// Problems returns the console errors and warnings and the exceptions so
// far.
func (p *Page) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.problems...)
}

// Requests returns every URL requested so far, data: URLs left out.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, u := range p.requests {
		if !strings.HasPrefix(u, "data:") {
			out = append(out, u)
		}
	}
	return out
}

// SetViewport sizes the page's window in CSS pixels.
func (p *Page) SetViewport(ctx context.Context, width, height int) error {
	return p.b.Call(ctx, p.id, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
}

// Navigate opens url and waits for its load event.
func (p *Page) Navigate(ctx context.Context, url string) error {
	select {
	case <-p.loaded:
	default:
	}
	var r struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.b.Call(ctx, p.id, "Page.navigate", map[string]any{"url": url}, &r); err != nil {
		return err
	}
	if r.ErrorText != "" {
		return fmt.Errorf("opening %s: %s", url, r.ErrorText)
	}
	select {
	case <-p.loaded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("opening %s: %w", url, ctx.Err())
	}
}

// Eval evaluates a script expression (awaiting a promise) and decodes its
// value into out (when not nil).
func (p *Page) Eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value jsontext.Value `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := p.b.Call(ctx, p.id, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return err
	}
	if d := r.ExceptionDetails; d != nil {
		return fmt.Errorf("script %q: %s %s", expr, d.Text, d.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

// WaitFor evaluates expr every few milliseconds until it is true.
func (p *Page) WaitFor(ctx context.Context, expr string) error {
	for {
		var ok bool
		if err := p.Eval(ctx, "!!("+expr+")", &ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", expr, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Click presses and releases the left button at (x, y) in CSS pixels.
func (p *Page) Click(ctx context.Context, x, y float64) error {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		params := map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}
		if typ == "mouseMoved" {
			params["button"] = "none"
		}
		if err := p.b.Call(ctx, p.id, "Input.dispatchMouseEvent", params, nil); err != nil {
			return err
		}
	}
	return nil
}

// Scroll turns the mouse wheel by dy pixels at (x, y).
func (p *Page) Scroll(ctx context.Context, x, y, dy float64) error {
	return p.b.Call(ctx, p.id, "Input.dispatchMouseEvent", map[string]any{"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": dy}, nil)
}

// Rect is a region of the page in CSS pixels.
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Screenshot returns a PNG of the viewport, or of clip when not nil.
func (p *Page) Screenshot(ctx context.Context, clip *Rect) ([]byte, error) {
	params := map[string]any{"format": "png"}
	if clip != nil {
		params["clip"] = map[string]any{"x": clip.X, "y": clip.Y, "width": clip.Width, "height": clip.Height, "scale": 1}
	}
	var r struct {
		Data string `json:"data"`
	}
	if err := p.b.Call(ctx, p.id, "Page.captureScreenshot", params, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}
