package mcp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonwire"
)

// pi 1.6's exposures of an MCP tool. Prime declares every tool it offers
// to the model directly; "hidden" keeps a tool from the model altogether,
// as in pi. pi's "codemode" and "deferred" reach tools through a script
// runtime and a tool search Prime does not have, so their tools are
// declared directly too, and an entry that asks for them is told so.
const (
	ExposureCodemode = "codemode"
	ExposureDeferred = "deferred"
	ExposureDirect   = "direct"
	ExposureHidden   = "hidden"
)

// exposureAliases are older names pi still accepts.
var exposureAliases = map[string]string{"codemode-deferred": ExposureCodemode}

// ExposureRule is one toolExposure member: a tool's exact name, or a
// pattern where * matches any characters, and its exposure.
type ExposureRule struct {
	Tool, Exposure string
}

func exposureValue(v string) (string, error) {
	if a, ok := exposureAliases[v]; ok {
		v = a
	}
	switch v {
	case ExposureCodemode, ExposureDeferred, ExposureDirect, ExposureHidden:
		return v, nil
	}
	return "", fmt.Errorf("%q is not one of %q, %q, %q or %q", v, ExposureCodemode, ExposureDeferred, ExposureDirect, ExposureHidden)
}

// parseToolExposure reads a toolExposure object, keeping its order (the
// first matching pattern wins).
func parseToolExposure(raw jsontext.Value) ([]ExposureRule, error) {
	if len(raw) == 0 || raw.Kind() == 'n' {
		return nil, nil
	}
	if raw.Kind() != '{' {
		return nil, errors.New("toolExposure must map tool names to exposures")
	}
	dec := jsonwire.NewDecoder(raw)
	if _, err := dec.ReadToken(); err != nil {
		return nil, fmt.Errorf("toolExposure: %w", err)
	}
	var rules []ExposureRule
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("toolExposure: %w", err)
		}
		name := tok.String() // before the next read, which reuses the token
		val, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("toolExposure: %w", err)
		}
		var v string
		if val.Kind() != '"' || json.Unmarshal(val, &v) != nil {
			return nil, fmt.Errorf("toolExposure %q must be a string", name)
		}
		e, err := exposureValue(v)
		if err != nil {
			return nil, fmt.Errorf("toolExposure %q: %w", name, err)
		}
		rules = append(rules, ExposureRule{Tool: name, Exposure: e})
	}
	return rules, nil
}

// ToolExposureOf returns the exposure of the server's tool named remote,
// as pi decides it: an exact toolExposure name, else the first pattern
// that matches, else the entry's exposure, else "direct" (Prime's way of
// offering every tool; pi's default is codemode).
func (s Server) ToolExposureOf(remote string) (exposure, rule string) {
	for _, r := range s.ToolExposure {
		if r.Tool == remote {
			return r.Exposure, r.Tool
		}
	}
	for _, r := range s.ToolExposure {
		if strings.Contains(r.Tool, "*") && starMatch(r.Tool, remote) {
			return r.Exposure, r.Tool
		}
	}
	if s.Exposure != "" {
		return s.Exposure, ""
	}
	return ExposureDirect, ""
}

// starMatch reports whether name matches pattern, where * matches any
// characters (and nothing else is special).
func starMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := len(parts) - 1
	for _, p := range parts[1:last] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[last])
}

// hiddenNote says why a hidden tool is not offered.
func (s Server) hiddenNote(remote string) (string, bool) {
	e, rule := s.ToolExposureOf(remote)
	if e != ExposureHidden {
		return "", false
	}
	if rule == "" {
		return fmt.Sprintf("tool %q not offered: the entry's exposure is %q", remote, ExposureHidden), true
	}
	return fmt.Sprintf("tool %q not offered: toolExposure %q is %q", remote, rule, ExposureHidden), true
}

// exposureWarnings are the notes for an entry that asks for exposures
// Prime serves differently.
func (s Server) exposureWarnings() []string {
	var out []string
	indirect := func(e string) bool { return e == ExposureCodemode || e == ExposureDeferred }
	if indirect(s.Exposure) {
		out = append(out, fmt.Sprintf("exposure %q: Prime has no codemode or tool_search, so it declares this server's tools to the model directly", s.Exposure))
	}
	for _, r := range s.ToolExposure {
		if indirect(r.Exposure) {
			out = append(out, fmt.Sprintf("toolExposure %q is %q: Prime declares such tools to the model directly", r.Tool, r.Exposure))
		}
	}
	return out
}
