package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
)

// TestExpandValue: apiKey and header values as pi 1.6's models.json
// documents them ($NAME, ${NAME}, $$, $!, literals), and the bare names
// older pi files hold.
func TestExpandValue(t *testing.T) {
	vars := map[string]string{"KEY": "sk-1", "TOKEN": "tok", "lower_name": "low", "OPENAI_API_KEY": "sk-env"}
	getenv := func(k string) string { return vars[k] }
	tests := []struct {
		spec, want string
		missing    []string
	}{
		{spec: "ollama", want: "ollama"},
		{spec: "EMPTY", want: "EMPTY"}, // vLLM's dummy key: pi 1.6 sends it as written
		{spec: "$KEY", want: "sk-1"},
		{spec: "${KEY}", want: "sk-1"},
		{spec: "Bearer ${TOKEN}", want: "Bearer tok"},
		{spec: "Bearer $TOKEN", want: "Bearer tok"},
		{spec: "$KEY-$TOKEN", want: "sk-1-tok"},
		{spec: "${lower_name}", want: "low"},
		{spec: "price$$5", want: "price$5"},
		{spec: "$!bang", want: "!bang"},
		{spec: "$", want: "$"},
		{spec: "a$-b", want: "a$-b"},
		{spec: "${not closed", want: "${not closed"},
		{spec: "${1bad}", want: "${1bad}"},
		{spec: "${}", want: "${}"},
		{spec: "OPENAI_API_KEY", want: "sk-env"}, // pi before 1.6
		{spec: "$UNSET", missing: []string{"UNSET"}},
		{spec: "x ${UNSET} $UNSET $OTHER", missing: []string{"UNSET", "OTHER"}},
	}
	for _, tt := range tests {
		got, err := expandValue("provider p apiKey", tt.spec, getenv)
		var mv *MissingVarsError
		switch {
		case tt.missing != nil:
			if !errors.As(err, &mv) || !slices.Equal(mv.Vars, tt.missing) || !strings.Contains(err.Error(), "provider p apiKey") {
				t.Errorf("%q: err %v, want missing %v", tt.spec, err, tt.missing)
			}
		case err != nil || got != tt.want:
			t.Errorf("%q = %q, %v; want %q", tt.spec, got, err, tt.want)
		}
	}
}

func TestValueVars(t *testing.T) {
	tests := map[string][]string{
		"$A_KEY":           {"A_KEY"},
		"Bearer ${T} $T":   {"T"},
		"MY_KEY":           {"MY_KEY"},
		"EMPTY":            nil,
		"!cat $HOME/.key":  nil,
		"plain":            nil,
		"$$NOT_A_VARIABLE": nil,
	}
	for spec, want := range tests {
		if got := valueVars(spec); !slices.Equal(got, want) {
			t.Errorf("valueVars(%q) = %v, want %v", spec, got, want)
		}
	}
}

// FuzzExpandValue: any value resolves without panicking; one without a "$"
// (and not a bare name) is itself; a value's variables are exactly those it
// reports missing when none is set.
func FuzzExpandValue(f *testing.F) {
	for _, s := range []string{"$KEY", "${KEY}", "Bearer ${T}", "$$", "$!", "${", "${}", "MY_KEY", "a$b$c", "$\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		got, err := expandValue("v", spec, func(string) string { return "" })
		vars := valueVars(spec)
		if strings.HasPrefix(spec, "!") {
			return
		}
		if legacyName(spec) {
			if got != "" || err != nil {
				t.Fatalf("bare name %q = %q, %v", spec, got, err)
			}
			return
		}
		var mv *MissingVarsError
		if len(vars) == 0 {
			if err != nil {
				t.Fatalf("%q: %v", spec, err)
			}
			if !strings.Contains(spec, "$") && got != spec {
				t.Fatalf("%q = %q", spec, got)
			}
		} else if !errors.As(err, &mv) || !slices.Equal(mv.Vars, vars) {
			t.Fatalf("%q: err %v, vars %v", spec, err, vars)
		}
		set, err := expandValue("v", spec, func(string) string { return "X" })
		if err != nil || strings.Count(set, "X") < len(vars) {
			t.Fatalf("%q with every variable set = %q, %v", spec, set, err)
		}
	})
}

// FuzzModelsJSON: any models.json is applied or refused with an error,
// never a panic; the sampling fields of every model it adds merge into a
// request body that stays one JSON object.
func FuzzModelsJSON(f *testing.F) {
	f.Add(`{"$schema": "x", "providers": {"p": {"baseUrl": "http://x/v1", "api": "openai-completions", "compat": {"supportsFinishReason": false},
	  "models": [{"id": "m", "reasoning": true, "thinkingLevelMap": {"minimal": null, "max": "m"}, "inputLimits": {},
	    "samplingParams": {"temperature": 1, "top_p": 0.9}, "samplingParamsByThinkingLevel": {"high": {"top_k": 20}}}]}}}`)
	f.Add(`{"providers": {"p": {"baseUrl": "http://x", "api": "openai-completions", "models": [{"id": "m", "samplingParams": {"a": 1, "a": 2}}]}}}`)
	f.Add(`{"providers": {"anthropic": {"compat": {"x": 1}, "modelOverrides": {"claude-opus-5": {"samplingParamsByThinkingLevel": {"off": {}}}}}}}`)
	f.Fuzz(func(t *testing.T, data string) {
		r := &Registry{providers: map[string]*provider{}, ModelsPath: "models.json"}
		for _, p := range builtinProviders(func(string) string { return "" }, "https://api.openai.com/v1") {
			r.providers[p.name] = p
		}
		for _, m := range llm.BuiltinModels() {
			r.entries = append(r.entries, Entry{Model: m, Source: SourceBuiltin})
		}
		if r.apply([]byte(data)) != nil {
			return
		}
		for _, e := range r.entries {
			body, err := e.Model.SamplingBody([]byte(`{"model":"m","stream":true}`), llm.ThinkingHigh)
			if err != nil {
				continue
			}
			if v := jsontext.Value(body); !v.IsValid() || v.Kind() != '{' {
				t.Fatalf("%s: body %s", e.Ref(), body)
			}
		}
	})
}
