package llmtest_test

import (
	"testing"

	"github.com/prime-agent/prime/llm/llmtest"
)

// TestConformance runs the provider conformance suite against every wire
// API Prime speaks.
func TestConformance(t *testing.T) {
	for _, v := range llmtest.Vendors() {
		t.Run(v.Name, func(t *testing.T) { llmtest.Conformance(t, v) })
	}
}
