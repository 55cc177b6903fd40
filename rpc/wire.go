package rpc

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// marshalOptions encode what a session may hold: invalid UTF-8 becomes
// U+FFFD, so every line written is valid UTF-8.
var marshalOptions = jsontext.AllowInvalidUTF8(true)

// object encodes as the object fill writes.
type object func(w *jsonwire.ObjectWriter)

func (f object) MarshalJSONTo(enc *jsontext.Encoder) error { return jsonwire.WriteObject(enc, f) }

// encode marshals the object fill writes.
func encode(fill func(w *jsonwire.ObjectWriter)) ([]byte, error) {
	return json.Marshal(object(fill), marshalOptions)
}

// quote appends s as a JSON string.
func quote(b []byte, s string) []byte {
	out, err := jsontext.AppendQuote(b, strings.ToValidUTF8(s, "\uFFFD"))
	if err != nil {
		return append(b, `""`...)
	}
	return out
}

// appendResponse appends a response line without its newline: success with
// data (nil: none), or failure with errText.
func appendResponse(b []byte, id jsontext.Value, command string, ok bool, data []byte, errText string) []byte {
	b = append(b, '{')
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"type":"response","command":`...)
	b = quote(b, command)
	if !ok {
		b = append(b, `,"success":false,"error":`...)
		b = quote(b, errText)
		return append(b, '}')
	}
	b = append(b, `,"success":true`...)
	if data != nil {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, '}')
}

// entryLine is an entry's line as stored, made valid UTF-8 when the file
// held invalid bytes (pi's reader would have replaced them too).
func entryLine(line []byte) (jsontext.Value, error) {
	v, err := validUTF8(line)
	if err != nil {
		return nil, fmt.Errorf("an entry's line: %w", err)
	}
	return v, nil
}

// validUTF8 returns v unchanged when it is valid UTF-8, else the same
// value with every invalid byte sequence in its strings replaced by U+FFFD
// (members in their order, repeated names kept).
func validUTF8(v []byte) (jsontext.Value, error) {
	if utf8.Valid(v) {
		return v, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v), jsonwire.ReadOptions)
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsonwire.ReadOptions)
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
		}
		if err != nil {
			return nil, err
		}
		if tok.Kind() == '"' {
			tok = jsontext.String(strings.ToValidUTF8(tok.String(), "\uFFFD"))
		}
		if err := enc.WriteToken(tok); err != nil {
			return nil, err
		}
	}
}

// wireModel is a model as pi's Model objects carry it, without the HTTP
// headers: their values may be keys resolved from the environment, which
// have no business on a protocol stream.
func wireModel(m llm.Model) llm.Model {
	m.Headers = nil
	return m
}

// contextUsage writes pi's contextUsage member ({tokens, contextWindow,
// percent}, tokens and percent null while unknown), absent without a
// window.
func contextUsage(w *jsonwire.ObjectWriter, u agent.ContextUsage) {
	if u.Window <= 0 {
		return
	}
	w.Value("contextUsage", object(func(w *jsonwire.ObjectWriter) {
		if u.Known {
			w.Int("tokens", int64(u.Tokens))
		} else {
			w.Null("tokens")
		}
		w.Int("contextWindow", int64(u.Window))
		if u.Known {
			w.Value("percent", u.Percent)
		} else {
			w.Null("percent")
		}
	}))
}

// stateData is get_state's answer: pi's fields, and contextUsage.
func stateData(st agent.State) ([]byte, error) {
	return encode(func(w *jsonwire.ObjectWriter) {
		if st.Model != nil {
			w.Value("model", wireModel(*st.Model))
		}
		w.Str("thinkingLevel", string(st.ThinkingLevel))
		w.Bool("isStreaming", st.Streaming)
		w.Bool("isCompacting", st.Compacting)
		w.Str("steeringMode", string(st.SteeringMode))
		w.Str("followUpMode", string(st.FollowUpMode))
		w.OptStr("sessionFile", st.SessionFile)
		w.Str("sessionId", st.SessionID)
		w.OptStr("sessionName", st.SessionName)
		w.Bool("autoCompactionEnabled", st.AutoCompaction)
		w.Int("messageCount", int64(st.MessageCount))
		w.Int("pendingMessageCount", int64(st.PendingMessageCount))
		contextUsage(w, st.Context)
	})
}

// statsData is get_session_stats's answer: pi's fields, contextUsage, and
// contextBreakdown when b is not nil.
func statsData(st agent.State, stats agent.Stats, usage agent.ContextUsage, b *agent.ContextBreakdown) ([]byte, error) {
	return encode(func(w *jsonwire.ObjectWriter) {
		w.OptStr("sessionFile", st.SessionFile)
		w.Str("sessionId", st.SessionID)
		w.Int("userMessages", int64(stats.UserMessages))
		w.Int("assistantMessages", int64(stats.AssistantMessages))
		w.Int("toolCalls", int64(stats.ToolCalls))
		w.Int("toolResults", int64(stats.ToolResults))
		w.Int("totalMessages", int64(stats.TotalMessages))
		t := stats.Tokens
		w.Value("tokens", object(func(w *jsonwire.ObjectWriter) {
			w.Int("input", int64(t.Input))
			w.Int("output", int64(t.Output))
			w.Int("cacheRead", int64(t.CacheRead))
			w.Int("cacheWrite", int64(t.CacheWrite))
			w.Int("total", int64(t.Input+t.Output+t.CacheRead+t.CacheWrite))
		}))
		w.Value("cost", stats.Cost)
		contextUsage(w, usage)
		if b != nil {
			w.Value("contextBreakdown", b)
		}
	})
}

// appendEntries appends the entries' lines as a JSON array.
func appendEntries(b []byte, lines [][]byte) ([]byte, error) {
	b = append(b, '[')
	for i, l := range lines {
		if i > 0 {
			b = append(b, ',')
		}
		line, err := entryLine(l)
		if err != nil {
			return nil, err
		}
		b = append(b, line...)
	}
	return append(b, ']'), nil
}

// appendLeaf appends the leaf id, or null for an empty session.
func appendLeaf(b []byte, id string) []byte {
	if id == "" {
		return append(b, "null"...)
	}
	return quote(b, id)
}

// appendTree appends pi's session tree: [{entry, children, label?,
// labelTimestamp?}, ...]. It is written with a stack of its own, not by
// recursion and not through an encoder, because a long session is a chain
// as deep as it has entries (deeper than any JSON encoder's nesting limit).
func appendTree(b []byte, roots []*agent.TreeNode) ([]byte, error) {
	type level struct {
		nodes []*agent.TreeNode
		next  int
	}
	b = append(b, '[')
	stack := []level{{nodes: roots}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.nodes) {
			b = append(b, ']')
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				b = appendLabel(b, parent.nodes[parent.next-1])
				b = append(b, '}')
			}
			continue
		}
		n := top.nodes[top.next]
		if top.next > 0 {
			b = append(b, ',')
		}
		top.next++
		line, err := entryLine(n.Line)
		if err != nil {
			return nil, err
		}
		b = append(b, `{"entry":`...)
		b = append(b, line...)
		b = append(b, `,"children":[`...)
		stack = append(stack, level{nodes: n.Children})
	}
	return b, nil
}

func appendLabel(b []byte, n *agent.TreeNode) []byte {
	if n.Label == "" {
		return b
	}
	b = append(b, `,"label":`...)
	b = quote(b, n.Label)
	if n.LabelTime != "" {
		b = append(b, `,"labelTimestamp":`...)
		b = quote(b, n.LabelTime)
	}
	return b
}

// marshalDropped encodes the queue_dropped line: the queued messages the
// end of input dropped (with Options.AbortAtEOF).
func marshalDropped(steering, followUp []string) ([]byte, error) {
	type dropped struct {
		Type     string   `json:"type"`
		Steering []string `json:"steering"`
		FollowUp []string `json:"followUp"`
	}
	return json.Marshal(dropped{"queue_dropped", append([]string{}, steering...), append([]string{}, followUp...)}, marshalOptions)
}
