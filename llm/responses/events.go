package responses

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/internal/sse"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/internal/stream"
)

type wireUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails *struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
}

// wireItem is an output item as the stream reports it.
type wireOutItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Phase     string `json:"phase"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
}

type wireResponse struct {
	ID                string           `json:"id"`
	Status            string           `json:"status"`
	Usage             *wireUsage       `json:"usage"`
	Output            []jsontext.Value `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wireEvent is one stream event; which fields are set depends on Type.
type wireEvent struct {
	Type        string         `json:"type"`
	OutputIndex *int           `json:"output_index"`
	Item        jsontext.Value `json:"item"`
	Delta       string         `json:"delta"`
	Arguments   *string        `json:"arguments"`
	Response    *wireResponse  `json:"response"`
	Code        jsontext.Value `json:"code"`
	Message     string         `json:"message"`
}

// slot is an output item being streamed into a content block.
type slot struct {
	kind string // llm.ContentText, ContentThinking or ContentToolCall
	idx  int    // content index
}

// reader turns Responses events into the builder's blocks.
type reader struct {
	b     *stream.Builder
	slots map[int]*slot
	// thinking maps reasoning item ids to their thinking blocks, for
	// encrypted content that arrives only with the completed response.
	thinking map[string]int
	// unfinished counts tool calls whose output_item.done has not come.
	unfinished map[int]string
}

func newReader(b *stream.Builder) *reader {
	return &reader{b: b, slots: map[int]*slot{}, thinking: map[string]int{}, unfinished: map[int]string{}}
}

func (r *reader) provider() string { return r.b.Message().Provider }

func (r *reader) bad(format string, args ...any) error {
	return &llm.APIError{Provider: r.provider(), Message: fmt.Sprintf(format, args...), Kind: llm.ErrBadResponse}
}

// run reads events until the terminal one.
func (r *reader) run(body io.Reader) error {
	sr := sse.NewReader(body)
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return stream.ConnectionError(r.provider(), errIncomplete)
		}
		if err != nil {
			return stream.ConnectionError(r.provider(), err)
		}
		if ev.IsDone() || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		var e wireEvent
		if err := json.Unmarshal(ev.Data, &e, jsonwire.ReadOptions); err != nil {
			return r.bad("undecodable event: %v", err)
		}
		if e.Type == "" {
			e.Type = ev.Type
		}
		done, err := r.event(&e)
		if err != nil || done {
			return err
		}
		if r.b.Stopped() {
			return nil
		}
	}
}

// event applies one event; done reports the end of the turn.
func (r *reader) event(e *wireEvent) (done bool, err error) {
	at := -1
	if e.OutputIndex != nil {
		at = *e.OutputIndex
	}
	switch e.Type {
	case "response.created", "response.in_progress":
		if e.Response != nil && e.Response.ID != "" {
			r.b.SetResponseID(e.Response.ID)
		}
		return false, r.start()
	case "response.output_item.added":
		var it wireOutItem
		if json.Unmarshal(e.Item, &it, jsonwire.ReadOptions) != nil {
			return false, r.bad("undecodable output item")
		}
		_, err := r.open(at, &it)
		return false, err
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		r.append(at, llm.ContentThinking, e.Delta)
	case "response.reasoning_summary_part.done":
		r.append(at, llm.ContentThinking, "\n\n")
	case "response.output_text.delta", "response.refusal.delta":
		r.append(at, llm.ContentText, e.Delta)
	case "response.function_call_arguments.delta":
		r.append(at, llm.ContentToolCall, e.Delta)
	case "response.function_call_arguments.done":
		if s := r.slots[at]; s != nil && s.kind == llm.ContentToolCall && e.Arguments != nil {
			r.restate(s.idx, *e.Arguments)
		}
	case "response.output_item.done":
		return false, r.itemDone(at, e.Item)
	case "response.completed", "response.incomplete":
		return true, r.finish(e.Response)
	case "response.failed":
		return true, r.failed(e.Response)
	case "error":
		code := strings.Trim(string(e.Code), `"`)
		if code == "null" {
			code = ""
		}
		return true, stream.ErrorReport{Type: code, Message: e.Message}.APIError(r.provider(), 0, 0)
	}
	return false, nil
}

func (r *reader) start() error {
	r.b.Start()
	return nil
}

// open starts the block of an output item at output index at.
func (r *reader) open(at int, it *wireOutItem) (*slot, error) {
	var idx int
	var ok bool
	s := &slot{}
	switch it.Type {
	case "reasoning":
		s.kind = llm.ContentThinking
		idx, ok = r.b.StartThinking()
	case "message":
		s.kind = llm.ContentText
		idx, ok = r.b.StartText()
	case "function_call":
		s.kind = llm.ContentToolCall
		idx, ok = r.b.StartToolCall(it.CallID+"|"+it.ID, it.Name)
		if ok && it.Arguments != "" {
			ok = r.b.Append(idx, it.Arguments)
		}
		r.unfinished[idx] = it.Name
	default:
		return nil, nil // web searches and the like: nothing to keep
	}
	s.idx = idx
	if ok {
		r.slots[at] = s
	}
	return s, nil
}

// append adds a delta to the open block at output index at, if it is of
// kind.
func (r *reader) append(at int, kind, delta string) {
	if s := r.slots[at]; s != nil && s.kind == kind {
		r.b.Append(s.idx, delta)
	}
}

// restate sets a block's text (or a call's arguments) to the full text a
// closing event restates: the missing tail goes as a delta when it extends
// what arrived (so it counts as any delta does), and only text that
// differs is replaced.
func (r *reader) restate(idx int, full string) {
	have := r.b.Text(idx)
	if full == have {
		return
	}
	if rest, ok := strings.CutPrefix(full, have); ok {
		r.b.Append(idx, rest)
		return
	}
	r.b.Replace(idx, full)
}

// itemDone closes an output item's block with what the item says in full.
func (r *reader) itemDone(at int, raw jsontext.Value) error {
	var it wireOutItem
	if json.Unmarshal(raw, &it, jsonwire.ReadOptions) != nil {
		return r.bad("undecodable output item")
	}
	s := r.slots[at]
	if s == nil {
		var err error
		if s, err = r.open(at, &it); err != nil || s == nil {
			return err
		}
	}
	delete(r.slots, at)
	switch it.Type {
	case "reasoning":
		if s.kind != llm.ContentThinking {
			return nil
		}
		var text []string
		for _, p := range it.Summary {
			text = append(text, p.Text)
		}
		if len(text) == 0 {
			for _, p := range it.Content {
				text = append(text, p.Text)
			}
		}
		if t := strings.Join(text, "\n\n"); t != "" {
			r.restate(s.idx, t)
		}
		compact := bytes.Clone(raw)
		if (*jsontext.Value)(&compact).Compact() != nil {
			return r.bad("undecodable reasoning item")
		}
		// Invalid UTF-8 from the server becomes U+FFFD, as it does in
		// every string the reader decodes: a message must be storable
		// (only string bodies hold bytes outside ASCII, so the item stays
		// JSON).
		r.b.AppendSignature(s.idx, strings.ToValidUTF8(string(compact), "\uFFFD"))
		if it.ID != "" {
			r.thinking[it.ID] = s.idx
		}
	case "message":
		if s.kind != llm.ContentText {
			return nil
		}
		var text strings.Builder
		for _, p := range it.Content {
			if p.Type == "output_text" {
				text.WriteString(p.Text)
			} else {
				text.WriteString(p.Refusal)
			}
		}
		r.restate(s.idx, text.String())
		sig, _ := json.Marshal(textSignature{V: 1, ID: it.ID, Phase: it.Phase})
		r.b.AppendSignature(s.idx, string(sig))
	case "function_call":
		if s.kind != llm.ContentToolCall {
			return nil
		}
		if it.Arguments != "" {
			r.restate(s.idx, it.Arguments)
		}
		delete(r.unfinished, s.idx)
	}
	r.b.End(s.idx)
	return nil
}

// finish ends the turn with the terminal response.
func (r *reader) finish(resp *wireResponse) error {
	if resp == nil {
		return r.bad("terminal event without a response")
	}
	if resp.ID != "" {
		r.b.SetResponseID(resp.ID)
	}
	r.backfill(resp.Output)
	if resp.Usage != nil {
		r.b.SetUsage(resp.Usage.usage())
	}
	reason := ""
	if resp.IncompleteDetails != nil {
		reason = resp.IncompleteDetails.Reason
	}
	stop, err := stopReason(r.provider(), resp.Status, reason)
	if err != nil {
		return err
	}
	hasCalls := len(r.b.Message().ToolCalls()) > 0 || len(r.unfinished) > 0
	if stop == llm.StopReasonStop && hasCalls {
		stop = llm.StopReasonToolUse
	}
	if stop == llm.StopReasonToolUse {
		for _, name := range r.unfinished {
			return r.bad("the response completed with an unfinished tool call %s", name)
		}
	}
	r.b.Finish(stop)
	return nil
}

// backfill puts encrypted reasoning that only the completed response
// carries (Azure leaves it out of output_item.done) into the stored
// reasoning items.
func (r *reader) backfill(output []jsontext.Value) {
	msg := r.b.Message()
	for _, raw := range output {
		var it wireOutItem
		if json.Unmarshal(raw, &it, jsonwire.ReadOptions) != nil || it.Type != "reasoning" || it.EncryptedContent == "" {
			continue
		}
		idx, ok := r.thinking[it.ID]
		if !ok || idx >= len(msg.Content) {
			continue
		}
		th, ok := msg.Content[idx].(llm.Thinking)
		if !ok {
			continue
		}
		var stored map[string]jsontext.Value
		if json.Unmarshal([]byte(th.Signature), &stored) != nil {
			continue
		}
		var have string
		json.Unmarshal(stored["encrypted_content"], &have)
		if have != "" {
			continue
		}
		th.Signature = withEncrypted(th.Signature, it.EncryptedContent)
		msg.Content[idx] = th
	}
}

// withEncrypted returns the JSON object item with its encrypted_content
// set to enc, the other members kept in order; item unchanged when it is
// not a JSON object or enc cannot be written.
func withEncrypted(item, enc string) string {
	dec := jsontext.NewDecoder(strings.NewReader(item))
	var out bytes.Buffer
	e := jsontext.NewEncoder(&out)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return item
	}
	var errs []error
	write := func(err error) { errs = append(errs, err) }
	write(e.WriteToken(jsontext.BeginObject))
	set := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return item
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return item
		}
		write(e.WriteToken(jsontext.String(name)))
		if name == "encrypted_content" {
			write(e.WriteToken(jsontext.String(enc)))
			set = true
			continue
		}
		write(e.WriteValue(val))
	}
	if !set {
		write(e.WriteToken(jsontext.String("encrypted_content")))
		write(e.WriteToken(jsontext.String(enc)))
	}
	write(e.WriteToken(jsontext.EndObject))
	if errors.Join(errs...) != nil {
		return item
	}
	return strings.TrimSpace(out.String())
}

// failed ends the turn with the failed response's error.
func (r *reader) failed(resp *wireResponse) error {
	rep := stream.ErrorReport{Message: "the response failed without an error"}
	if resp != nil && resp.Error != nil {
		rep = stream.ErrorReport{Type: resp.Error.Code, Message: resp.Error.Message}
	} else if resp != nil && resp.IncompleteDetails != nil {
		rep.Message = "incomplete: " + resp.IncompleteDetails.Reason
	}
	return rep.APIError(r.provider(), 0, 0)
}
