package tool

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/golden"
)

func specNamed(name string) Spec {
	for _, tl := range Builtins(Env{CWD: "/work"}) {
		if tl.Spec().Name == name {
			return tl.Spec()
		}
	}
	panic(name)
}

func TestValidateCoerces(t *testing.T) {
	tests := []struct {
		tool, args, want string
	}{
		{"read", `{"path":"a"}`, `{"path":"a"}`},
		{"read", ``, ``}, // empty: the empty object, which lacks path (below)
		{"read", `{"path":"a","offset":"5"}`, `{"path":"a","offset":5}`},
		{"read", `{"path":"a","offset":" 2.50 "}`, `{"path":"a","offset":2.5}`},
		{"read", `{"path":"a","offset":"1e3"}`, `{"path":"a","offset":1000}`},
		{"read", `{"path":"a","offset":"-3"}`, `{"path":"a","offset":-3}`},
		{"read", `{"path":"a","offset":null,"limit":null}`, `{"path":"a"}`},
		{"read", `{"path":7}`, `{"path":"7"}`},
		{"read", `{"path":true}`, `{"path":"true"}`},
		{"read", `{"limit":3,"path":"a","extra":{"kept":[1]}}`, `{"limit":3,"path":"a","extra":{"kept":[1]}}`},
		{"grep", `{"pattern":"x","ignoreCase":"TRUE","literal":"false"}`, `{"pattern":"x","ignoreCase":true,"literal":false}`},
		{"grep", `{"pattern":"x","context":"2"}`, `{"pattern":"x","context":2}`},
		{"edit", `{"path":"a","edits":{"oldText":"x","newText":"y"}}`, `{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`},
		{"edit", `{"path":"a","edits":[{"oldText":1,"newText":false}]}`, `{"path":"a","edits":[{"oldText":"1","newText":"false"}]}`},
		{"bash", `{"command":"ls","timeout":"30"}`, `{"command":"ls","timeout":30}`},
		{"ls", `{}`, `{}`},
		{"ls", `{"path":"a","path":"b"}`, `{"path":"b"}`}, // a repeated name: the last value, as JSON.parse
		{"write", `{"path":"é\u0000","content":"<a&b>"}`, `{"path":"é\u0000","content":"<a&b>"}`},
	}
	for _, tt := range tests {
		got, err := Validate(specNamed(tt.tool), jsontext.Value(tt.args))
		if tt.want == "" {
			if err == nil {
				t.Errorf("%s %s: no error", tt.tool, tt.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tt.tool, tt.args, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tt.tool, tt.args, got, tt.want)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		label, tool, args string
		paths             []string
	}{
		{"missing required", "read", `{}`, []string{"path"}},
		{"wrong type", "read", `{"path":"a","offset":"x"}`, []string{"offset"}},
		{"empty string is no number", "read", `{"path":"a","limit":""}`, []string{"limit"}},
		{"hex is no number", "read", `{"path":"a","limit":"0x10"}`, []string{"limit"}},
		{"not a boolean", "grep", `{"pattern":"x","ignoreCase":"yes"}`, []string{"ignoreCase"}},
		{"number is no boolean", "grep", `{"pattern":"x","literal":1}`, []string{"literal"}},
		{"null for a required", "write", `{"path":null,"content":"x"}`, []string{"path"}},
		{"object for a string", "write", `{"path":{"p":1},"content":[]}`, []string{"path", "content"}},
		{"several, schema order", "write", `{"content":{},"path":[]}`, []string{"path", "content"}},
		{"huge number as a string", "write", `{"path":"a","content":5.5e400,"x":1}`, nil},
		{"nested", "edit", `{"path":"a","edits":[{"oldText":"x"},{"newText":[]}]}`, []string{"edits.0.newText", "edits.1.oldText", "edits.1.newText"}},
		{"null array", "edit", `{"path":"a","edits":null}`, []string{"edits"}},
		{"array arguments", "read", `[1]`, []string{rootPath}},
		{"string arguments", "read", `"str"`, []string{rootPath}},
		{"null arguments", "ls", `null`, []string{rootPath}},
		{"invalid JSON", "read", `{"path":`, []string{rootPath}},
		{"two values", "read", `{} {}`, []string{rootPath}},
	}
	var b strings.Builder
	for _, tt := range tests {
		_, err := Validate(specNamed(tt.tool), jsontext.Value(tt.args))
		if tt.paths == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.label, err)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: error %v, want a *ValidationError", tt.label, err)
			continue
		}
		var paths []string
		for _, p := range ve.Problems {
			paths = append(paths, p.Path)
		}
		if strings.Join(paths, " ") != strings.Join(tt.paths, " ") {
			t.Errorf("%s: problem paths %v, want %v", tt.label, paths, tt.paths)
		}
		if ve.Tool != tt.tool || string(ve.Received) != tt.args {
			t.Errorf("%s: Tool %q Received %q", tt.label, ve.Tool, ve.Received)
		}
		b.WriteString("### " + tt.label + "\n" + err.Error() + "\n\n")
	}
	golden.Check(t, "validate-errors.golden", b.String())
}

func TestValidateSchemaKeywords(t *testing.T) {
	spec := Spec{Name: "t", Parameters: jsontext.Value(`{"type":"object","additionalProperties":false,` +
		`"required":["mode","tags","n"],"properties":{` +
		`"mode":{"type":"string","enum":["fast","slow"]},` +
		`"tags":{"type":"array","items":{"type":"string"},"minItems":2},` +
		`"n":{"type":"integer"},` +
		`"maybe":{"type":["number","null"]},` +
		`"any":true,` +
		`"map":{"type":"object","additionalProperties":{"type":"boolean"}}}}`)}
	for _, tt := range []struct {
		args  string
		want  string // coerced, or the problems joined
		valid bool
	}{
		{`{"mode":"slow","tags":["a",2],"n":"4","maybe":null,"any":{"x":1},"map":{"a":"true"}}`,
			`{"mode":"slow","tags":["a","2"],"n":4,"maybe":null,"any":{"x":1},"map":{"a":true}}`, true},
		{`{"mode":"fast","tags":["one","two"],"n":2.0,"maybe":"7"}`, `{"mode":"fast","tags":["one","two"],"n":2.0,"maybe":7}`, true},
		{`{"mode":"medium","tags":[],"n":2.5,"extra":1,"map":{"a":1}}`,
			"mode: should be one of \"fast\", \"slow\"|tags: should hold at least 2 items|n: should be an integer, not a number|map.a: should be a boolean, not a number|extra: is not a parameter of this tool", false},
		{`{"mode":"fast","tags":["a","b"],"n":"2.5"}`, "n: should be an integer, not a string", false},
		{`{"mode":"fast","tags":"one","n":1}`, "tags: should hold at least 2 items", false},
	} {
		got, err := Validate(spec, jsontext.Value(tt.args))
		if tt.valid {
			if err != nil || string(got) != tt.want {
				t.Errorf("%s:\n got %s, %v\nwant %s", tt.args, got, err, tt.want)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v", tt.args, err)
			continue
		}
		var probs []string
		for _, p := range ve.Problems {
			probs = append(probs, p.Path+": "+p.Message)
		}
		if g := strings.Join(probs, "|"); g != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.args, g, tt.want)
		}
	}
}

func TestValidateBadSchema(t *testing.T) {
	for _, params := range []string{`[1]`, `{"type":"strange"}`, `{"type":3}`, `{"properties":[]}`, `{"required":"x"}`, `{"minItems":-1}`, `not json`} {
		_, err := Validate(Spec{Name: "t", Parameters: jsontext.Value(params)}, jsontext.Value(`{}`))
		var ve *ValidationError
		if err == nil || errors.As(err, &ve) {
			t.Errorf("schema %s: error %v, want a schema error", params, err)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{"path":"a","offset":"5"}`, `{"path":"a","edits":"[{\"oldText\":\"x\",\"newText\":\"y\"}]"}`,
		`{"pattern":"x","context":null,"ignoreCase":"true"}`, `[]`, `{"path":1e999}`, `{"edits":{"oldText":1}}`} {
		f.Add(s)
	}
	specs := []Spec{}
	for _, tl := range Builtins(Env{CWD: "/work"}) {
		specs = append(specs, tl.Spec())
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, spec := range specs {
			out, err := Validate(spec, jsontext.Value(args))
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) || len(ve.Problems) == 0 || !strings.Contains(err.Error(), spec.Name) {
					t.Fatalf("%s: %v", spec.Name, err)
				}
				continue
			}
			if !out.IsValid() {
				t.Fatalf("%s: invalid JSON out: %s", spec.Name, out)
			}
			// What passed is a fixed point: validating it again changes nothing.
			again, err := Validate(spec, out)
			if err != nil || string(again) != string(out) {
				t.Fatalf("%s: not a fixed point: %s -> %s, %v", spec.Name, out, again, err)
			}
		}
	})
}
