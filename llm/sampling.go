package llm

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// SamplingBody returns body (a request's JSON object) with the model's
// sampling fields merged in, as pi merges them into OpenAI-compatible
// requests: the model's SamplingParams, then those of the thinking level
// the request runs at (after clamping), each later value replacing an
// earlier one of the same name in place, new names added at the end. A
// model without sampling fields gets body unchanged.
func (m Model) SamplingBody(body []byte, level ThinkingLevel) ([]byte, error) {
	layers := []jsontext.Value{m.SamplingParams}
	if len(m.SamplingParamsByThinkingLevel) > 0 {
		layers = append(layers, m.SamplingParamsByThinkingLevel[m.ClampThinking(level)])
	}
	return mergeObjects(body, layers...)
}

// member is one name and value of a JSON object.
type member struct {
	name  string
	value jsontext.Value
}

// objectMembers reads a JSON object's members in order.
func objectMembers(v jsontext.Value) ([]member, error) {
	dec := jsonwire.NewDecoder(v)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		n := name.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, member{name: n, value: bytes.Clone(val)})
	}
	return out, nil
}

// mergeObjects merges the members of each layer (nil layers skipped) into
// the object body.
func mergeObjects(body []byte, layers ...jsontext.Value) ([]byte, error) {
	var over []member
	for _, l := range layers {
		if len(l) == 0 {
			continue
		}
		ms, err := objectMembers(l)
		if err != nil {
			return nil, fmt.Errorf("samplingParams: %w", err)
		}
		over = append(over, ms...)
	}
	if len(over) == 0 {
		return body, nil
	}
	base, err := objectMembers(body)
	if err != nil {
		return nil, err
	}
	for _, o := range over {
		i := 0
		for i < len(base) && base[i].name != o.name {
			i++
		}
		if i < len(base) {
			base[i].value = o.value
		} else {
			base = append(base, o)
		}
	}
	var b bytes.Buffer
	err = jsonwire.WriteObject(jsontext.NewEncoder(&b), func(w *jsonwire.ObjectWriter) {
		for _, m := range base {
			w.Raw(m.name, m.value)
		}
	})
	if err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}
