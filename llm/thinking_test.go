package llm

import (
	"fmt"
	"testing"
)

// TestClampThinking follows pi's clampThinkingLevel: a supported level
// stays, an unsupported one goes to the next higher supported level, else
// the next lower; xhigh needs a mapping or SupportsXHigh.
func TestClampThinking(t *testing.T) {
	s := func(v string) *string { return &v }
	gpt5 := map[ThinkingLevel]*string{ThinkingOff: nil, ThinkingMinimal: s("minimal"), ThinkingXHigh: nil}
	pro := map[ThinkingLevel]*string{ThinkingOff: nil, ThinkingMinimal: nil, ThinkingLow: nil, ThinkingMedium: nil}
	for _, tc := range []struct {
		m      Model
		level  ThinkingLevel
		want   ThinkingLevel
		levels string
	}{
		{Model{}, ThinkingHigh, ThinkingOff, "[off]"},
		{Model{Reasoning: true}, ThinkingXHigh, ThinkingHigh, "[off minimal low medium high]"},
		{Model{Reasoning: true, SupportsXHigh: true}, ThinkingXHigh, ThinkingXHigh, "[off minimal low medium high xhigh]"},
		{Model{Reasoning: true, ThinkingLevelMap: gpt5}, ThinkingOff, ThinkingMinimal, "[minimal low medium high]"},
		{Model{Reasoning: true, ThinkingLevelMap: gpt5}, "", ThinkingMinimal, "[minimal low medium high]"},
		{Model{Reasoning: true, ThinkingLevelMap: pro}, ThinkingLow, ThinkingHigh, "[high]"},
		{Model{Reasoning: true, ThinkingLevelMap: pro, SupportsXHigh: true}, ThinkingXHigh, ThinkingXHigh, "[high xhigh]"},
		{Model{Reasoning: true, ThinkingLevelMap: map[ThinkingLevel]*string{ThinkingXHigh: s("max")}}, ThinkingXHigh, ThinkingXHigh, "[off minimal low medium high xhigh]"},
		{Model{Reasoning: true}, "extreme", ThinkingOff, "[off minimal low medium high]"},
	} {
		if got := tc.m.ClampThinking(tc.level); got != tc.want {
			t.Errorf("%+v at %q: %q, want %q", tc.m.ThinkingLevelMap, tc.level, got, tc.want)
		}
		if got := fmt.Sprint(tc.m.ThinkingLevels()); got != tc.levels {
			t.Errorf("%+v: levels %s, want %s", tc.m.ThinkingLevelMap, got, tc.levels)
		}
	}
	if v, mapped := (Model{ThinkingLevelMap: gpt5}).ThinkingValue(ThinkingOff); v != "" || !mapped {
		t.Errorf("off of gpt-5: %q %v", v, mapped)
	}
	if v, mapped := (Model{}).ThinkingValue(ThinkingHigh); v != "high" || mapped {
		t.Errorf("high without a table: %q %v", v, mapped)
	}
}
