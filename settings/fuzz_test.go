package settings

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prime-agent/prime/internal/jsonedit"
)

// fuzzKeys are the keys FuzzSettings edits: every known key and a
// per-model override field.
func fuzzKeys() []string {
	var ks []string
	for _, d := range knownKeys {
		ks = append(ks, d.name)
	}
	return append(ks, `compaction.modelOverrides["a/m"].reserveTokens`, `compaction.modelOverrides["b/m"].keepRecentTokens`)
}

// snapshot is everything a layer says, positions aside.
type snapshot struct {
	Plain     map[string]any
	Overrides map[string]map[string]int
	Models    []string
	Hooks     []Hook
	Trusted   []string
	Problems  []string
}

func snap(l *layer, probs []Problem, skip string) snapshot {
	s := snapshot{Plain: map[string]any{}, Hooks: l.hooks, Trusted: l.trusted}
	for k, v := range l.plain {
		if k != skip {
			s.Plain[k] = v.value
		}
	}
	if l.overrides != nil {
		s.Overrides = map[string]map[string]int{}
		for m, fs := range l.overrides.fields {
			for f, v := range fs {
				if overrideKeyName(m, f) == skip {
					continue
				}
				if s.Overrides[m] == nil {
					s.Overrides[m] = map[string]int{}
				}
				s.Overrides[m][f] = v
			}
		}
		s.Models = slices.Clone(l.overrides.models)
	}
	for _, p := range probs {
		// Positions move when text is inserted above them; what is wrong
		// does not.
		if p.Key != skip {
			s.Problems = append(s.Problems, p.Key+": "+p.Msg)
		}
	}
	return s
}

// FuzzSettings checks the settings reader and writer together: reading any
// text never panics and reports unparsable text with a position; setting a
// key in a file that parses gives a file that parses, with that key set
// and everything else it says unchanged.
func FuzzSettings(f *testing.F) {
	f.Add([]byte(piSettings), uint8(0), "false")
	f.Add([]byte(piSettings), uint8(10), "1234")
	f.Add([]byte(`{"compaction": {"modelOverrides": {"a/m": {"reserveTokens": -1}, "b/m": null}}, "hooks": [{"event": "e", "command": "c"}]}`), uint8(11), "77")
	f.Add([]byte(`{"compaction": null, "retry": {"maxRetries": "x"}, "trustedProjects": ["/a", 1]}`), uint8(3), "p/m")
	f.Add([]byte("\ufeff{\r\n\t\"branchSummary\": {}\r\n}"), uint8(5), "true")
	f.Add([]byte(`{"compaction": 5}`), uint8(1), "1")
	f.Add([]byte(`{"a": 1,}`), uint8(0), "true")
	f.Add([]byte(``), uint8(9), "0")
	keys := fuzzKeys()
	f.Fuzz(func(t *testing.T, src []byte, which uint8, value string) {
		l, probs := parseLayer(Global, "settings.json", src)
		for _, p := range probs {
			if p.Broken && p.Line < 1 && strings.Contains(p.Msg, "does not parse") {
				t.Fatalf("parse problem without a position: %+v", p)
			}
		}
		doc, err := jsonedit.Parse(src)
		if err != nil || doc.Root != nil && doc.Root.Kind != '{' {
			return
		}
		k, err := parseKey(keys[int(which)%len(keys)])
		if err != nil {
			t.Fatal(err)
		}
		want, raw, err := k.parseValue(value)
		if err != nil {
			return
		}
		out, err := doc.Set(k.path(), raw)
		if err != nil {
			if !errors.Is(err, jsonedit.ErrNotObject) {
				t.Fatalf("Set(%s, %s) on %q: %v", k, raw, src, err)
			}
			return
		}
		l2, probs2 := parseLayer(Global, "settings.json", out)
		for _, p := range probs2 {
			if p.Broken {
				t.Fatalf("after Set(%s, %s) the file is broken: %v\n%q", k, raw, p, out)
			}
		}
		var got any
		if k.model != "" {
			if l2.overrides != nil {
				if v, ok := l2.overrides.fields[k.model][k.field]; ok {
					got = v
				}
			}
		} else {
			got = l2.plain[k.def.name].value
		}
		if !cmp.Equal(got, want) {
			t.Fatalf("after Set(%s, %s): read back %v, want %v\n%q", k, raw, got, want, out)
		}
		before, after := snap(l, probs, k.String()), snap(l2, probs2, k.String())
		if k.model != "" && before.Overrides == nil {
			// The edit created the map: only the new model is in it.
			after.Overrides, after.Models = nil, nil
		}
		if k.model != "" && !slices.Contains(before.Models, k.model) {
			after.Models = slices.DeleteFunc(after.Models, func(m string) bool { return m == k.model })
			delete(after.Overrides, k.model)
		}
		// An override map with no models and none at all say the same.
		if diff := cmp.Diff(before, after, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Set(%s, %s) changed other settings (-before +after):\n%s\nbefore %q\nafter  %q", k, raw, diff, src, out)
		}
	})
}
