package rpc

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonedit"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// command is one line of input, decoded: its id (echoed in the response),
// its type, and its other members, read on demand by the accessors, which
// remember the first member that is missing or of the wrong type.
type command struct {
	// id is the id member as the client wrote it (compacted), nil when
	// there is none.
	id  jsontext.Value
	typ string
	// members are the line's members, by name (the last of a repeated
	// name, as JSON.parse keeps it).
	members map[string]jsontext.Value
	err     error
}

// parseError is a line that is not a command: its text follows "Failed to
// parse command: " in the response.
type parseError struct{ detail string }

func (e *parseError) Error() string { return "Failed to parse command: " + e.detail }

// parseCommand decodes a line. A line that is not one JSON object, or whose
// type is not a string, is a *parseError; the command is still returned
// when its id could be read, so the failure can carry it.
func parseCommand(line []byte) (*command, error) {
	var v jsontext.Value
	if err := json.Unmarshal(line, &v, jsonwire.ReadOptions); err != nil {
		return nil, &parseError{detail: jsonDetail(err)}
	}
	if k := v.Kind(); k != '{' {
		return nil, &parseError{detail: "a command is a JSON object, not " + jsonedit.KindName(k)}
	}
	c := &command{}
	if err := json.Unmarshal(v, &c.members, jsonwire.ReadOptions); err != nil {
		return nil, &parseError{detail: jsonDetail(err)}
	}
	if id, ok := c.members["id"]; ok {
		if id, err := validUTF8(id); err == nil {
			id = id.Clone()
			if id.Compact(jsonwire.ReadOptions) == nil {
				c.id = id
			}
		}
	}
	t, ok := c.members["type"]
	if !ok {
		return c, &parseError{detail: `no "type" member naming the command`}
	}
	if t.Kind() != '"' || json.Unmarshal(t, &c.typ, jsonwire.ReadOptions) != nil {
		return c, &parseError{detail: `"type" must be a string naming the command, not ` + jsonedit.KindName(t.Kind())}
	}
	return c, nil
}

// jsonDetail is a decoding error without the package's prefix.
func jsonDetail(err error) string {
	s := err.Error()
	for _, p := range []string{"json: ", "jsontext: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

// idText is the id as bash_execution_update events carry it: the string,
// or the JSON text of an id of another type.
func (c *command) idText() string {
	if c.id == nil {
		return ""
	}
	var s string
	if c.id.Kind() == '"' && json.Unmarshal(c.id, &s, jsonwire.ReadOptions) == nil {
		return s
	}
	return string(c.id)
}

// fieldError is a member that is missing or of the wrong type.
type fieldError struct {
	name, want string
	got        jsontext.Kind // 0: missing
}

func (e *fieldError) Error() string {
	if e.got == 0 {
		return fmt.Sprintf("missing %q (%s)", e.name, e.want)
	}
	return fmt.Sprintf("%q must be %s, not %s", e.name, e.want, jsonedit.KindName(e.got))
}

// fail records the first problem with the command's members.
func (c *command) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// member returns the named member; null counts as absent.
func (c *command) member(name string) (jsontext.Value, bool) {
	v, ok := c.members[name]
	if !ok || v.Kind() == 'n' {
		return nil, false
	}
	return v, true
}

// str reads a string member that must be present.
func (c *command) str(name string) string {
	s, ok := c.optStr(name)
	if !ok {
		c.fail(&fieldError{name: name, want: "a string"})
	}
	return s
}

// optStr reads a string member that may be absent.
func (c *command) optStr(name string) (string, bool) {
	v, ok := c.member(name)
	if !ok {
		return "", false
	}
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s, jsonwire.ReadOptions) != nil {
		c.fail(&fieldError{name: name, want: "a string", got: v.Kind()})
		return "", true
	}
	return s, true
}

// boolean reads a boolean member that must be present.
func (c *command) boolean(name string) bool {
	v, ok := c.member(name)
	if !ok {
		c.fail(&fieldError{name: name, want: "true or false"})
		return false
	}
	return c.boolValue(name, v)
}

// optBool reads a boolean member that may be absent (false).
func (c *command) optBool(name string) bool {
	v, ok := c.member(name)
	if !ok {
		return false
	}
	return c.boolValue(name, v)
}

func (c *command) boolValue(name string, v jsontext.Value) bool {
	switch v.Kind() {
	case 't':
		return true
	case 'f':
		return false
	}
	c.fail(&fieldError{name: name, want: "true or false", got: v.Kind()})
	return false
}

// oneOf reads a string member whose value must be one of values; absent
// is "" unless required.
func (c *command) oneOf(name string, required bool, values ...string) string {
	var s string
	var ok bool
	if required {
		s, ok = c.str(name), true
	} else {
		s, ok = c.optStr(name)
	}
	if !ok || c.err != nil || slices.Contains(values, s) {
		return s
	}
	c.fail(fmt.Errorf("%q must be %s, not %q", name, orList(values), s))
	return ""
}

// orList quotes values and joins them with commas and a final "or".
func orList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// errBadImage is the cause of an images member that is not a list of pi's
// image blocks.
var errBadImage = errors.New(`each image is {"type":"image","data":BASE64,"mimeType":"image/..."}`)

// images reads the optional images member: pi's image blocks.
func (c *command) images() []llm.Image {
	v, ok := c.member("images")
	if !ok {
		return nil
	}
	var raw []map[string]jsontext.Value
	if v.Kind() != '[' || json.Unmarshal(v, &raw, jsonwire.ReadOptions) != nil {
		c.fail(fmt.Errorf("%q must be a list of images: %w", "images", errBadImage))
		return nil
	}
	out := make([]llm.Image, 0, len(raw))
	for i, m := range raw {
		img := &command{members: m}
		if t, ok := img.optStr("type"); ok && t != "image" {
			img.fail(fmt.Errorf("type %q", t))
		}
		data, mime := img.str("data"), img.str("mimeType")
		if img.err == nil && !strings.HasPrefix(mime, "image/") {
			img.fail(fmt.Errorf("mimeType %q", mime))
		}
		if img.err == nil {
			if _, err := base64.StdEncoding.DecodeString(data); err != nil {
				img.fail(fmt.Errorf("data is not base64: %v", err))
			}
		}
		if img.err != nil {
			c.fail(fmt.Errorf("image %d: %v: %w", i+1, img.err, errBadImage))
			return nil
		}
		out = append(out, llm.Image{Data: data, MIMEType: mime})
	}
	return out
}
