package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm/llmtest"
)

// TestExportHTMLOfAgent: the page of a live session, with the marks of
// the model the agent converses with; the history /context draws.
func TestExportHTMLOfAgent(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	srv.Handle(echo)
	ag, _ := live(t, srv, nil, upper{})
	send(t, ag, "hello")
	send(t, ag, "and again, with the key sk-ant-api03-0123456789abcdefghijkl")
	h, err := ag.ContextHistory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Points) != 2 || !h.Points[0].Measured || h.Points[1].Tokens <= h.Points[0].Tokens {
		t.Errorf("history %+v", h.Points)
	}
	path := filepath.Join(t.TempDir(), "page.html")
	res, err := ag.ExportHTML(t.Context(), path, agent.HTMLExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	window := srv.Model().ContextWindow
	if res.Bytes != int64(len(page)) || res.Redacted != 1 || fi.Mode().Perm() != 0o600 {
		t.Errorf("result %+v, file of %d bytes, mode %v", res, len(page), fi.Mode())
	}
	for _, want := range []string{"window " + numfmt.Commas(window), "compaction threshold", "background summary", "sk-ant-[redacted]"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(string(page), "0123456789abcdefghijkl") {
		t.Error("the key reached the page")
	}
}
