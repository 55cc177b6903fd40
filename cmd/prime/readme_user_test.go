package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm/llmtest"
)

// readmeUserEnv is a new user's machine for the README's shell blocks: a
// HOME whose agent directory's models.json serves fake/fake-model from
// "prime dev fake-llm" (which answers "fake reply to: " and what it was
// sent), a project directory, and a PATH whose prime is the binary the
// tests built. The README's blocks then run with their own "prime".
type readmeUserEnv struct {
	home, project, path string
}

func newReadmeUserEnv(t *testing.T) *readmeUserEnv {
	t.Helper()
	e := newReadmeHome(t)
	_, stop := startFakeLLM(t, e.agentDir(), "--api", "anthropic")
	t.Cleanup(stop)
	return e
}

// newReadmeHome is a readmeUserEnv without a model: an empty agent
// directory.
func newReadmeHome(t *testing.T) *readmeUserEnv {
	t.Helper()
	bin := buildPrime(t)
	e := &readmeUserEnv{home: t.TempDir(), project: t.TempDir(), path: t.TempDir()}
	if err := os.MkdirAll(e.agentDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(e.path, "prime")); err != nil {
		t.Fatal(err)
	}
	return e
}

// agentDir is the user's agent directory, ~/.prime/agent.
func (e *readmeUserEnv) agentDir() string { return filepath.Join(e.home, ".prime", "agent") }

// run runs a README block with bash -e in the project directory and
// returns its output.
func (e *readmeUserEnv) run(t *testing.T, block []string) string {
	t.Helper()
	script := "export PATH=" + e.path + ":$PATH\n" + strings.Join(block, "\n") + "\n"
	out, err := runScript(t, e.project, e.home, script)
	if err != nil {
		t.Fatalf("%v\n%s\nthe script:\n%s", err, out, script)
	}
	return out
}

// readmeSends is what a README command line's "# sends: TEXT" remark says
// it sends to the model.
func readmeSends(t *testing.T, block []string) string {
	t.Helper()
	for _, l := range block {
		if _, sends, ok := strings.Cut(l, "# sends: "); ok {
			return strings.TrimSpace(sends)
		}
	}
	t.Fatalf("the README's block has no \"# sends:\" remark:\n%s", strings.Join(block, "\n"))
	return ""
}

// TestREADMESkillExample runs the README's skill script as written, with
// the default settings and the model its models.json offers: the skill is
// written into ~/.prime/agent/skills and "/skill:pdf-tools extract
// report.pdf" sends the skill's instructions, then the arguments.
func TestREADMESkillExample(t *testing.T) {
	e := newReadmeUserEnv(t)
	block := readmeBlock(t, "skills/pdf-tools/SKILL.md", "/skill:pdf-tools")
	out := e.run(t, block)
	skill := filepath.Join(e.home, ".prime", "agent", "skills", "pdf-tools", "SKILL.md")
	for _, want := range []string{
		`fake reply to: <skill name="pdf-tools" location="` + skill + `">`,
		"Run `scripts/extract.sh FILE.pdf` from this directory",
		"</skill>\n\nextract report.pdf",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}

// TestREADMEPromptTemplateExample runs the README's prompt-template script
// as written: the model is sent what its "# sends:" remark says.
func TestREADMEPromptTemplateExample(t *testing.T) {
	e := newReadmeUserEnv(t)
	block := readmeBlock(t, "prompts/review.md", "/review")
	want := readmeSends(t, block)
	out := e.run(t, block)
	if got := strings.TrimSpace(out); got != "fake reply to: "+want {
		t.Errorf("the model was sent %q, the README says %q", strings.TrimPrefix(got, "fake reply to: "), want)
	}
}

// TestREADMEPrintModeExamples runs the README's print-mode command lines as
// written, one after another in one project with the default settings (a
// shot.png in it for the line that attaches one), and checks what each
// line's remark promises: the final answer printed, the image attached, the
// latest session continued, every event as a JSON line with the header
// first, and /compact answered by Prime itself (that session holds one
// exchange: nothing to compact, said once, exit 0; after a second
// exchange, a compaction with the line's instructions).
func TestREADMEPrintModeExamples(t *testing.T) {
	e := newReadmeUserEnv(t)
	block := readmeBlock(t, `prime -p "fix the failing test"`, "prime --mode json")
	if len(block) != 5 {
		t.Fatalf("the README's print-mode block has %d lines, this test knows 5:\n%s", len(block), strings.Join(block, "\n"))
	}
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
	writeFile(t, filepath.Join(e.project, "shot.png"), png)
	sessions := func() []string {
		files, _ := filepath.Glob(filepath.Join(e.home, ".prime", "agent", "sessions", "*", "*.jsonl"))
		return files
	}
	newest := func() string {
		var best string
		var bestTime int64
		for _, f := range sessions() {
			if fi, err := os.Stat(f); err == nil && fi.ModTime().UnixNano() >= bestTime {
				best, bestTime = f, fi.ModTime().UnixNano()
			}
		}
		data, _ := os.ReadFile(best)
		return string(data)
	}

	out := e.run(t, block[:1])
	if strings.TrimSpace(out) != "fake reply to: fix the failing test" {
		t.Errorf("%s:\n%s", block[0], out)
	}
	out = e.run(t, block[1:2])
	if s := newest(); !strings.Contains(s, `"type":"image"`) || !strings.Contains(s, `"mimeType":"image/png"`) || !strings.Contains(out, "fake reply to:") {
		t.Errorf("%s: the session holds no image:\n%s\noutput:\n%s", block[1], s, out)
	}
	out = e.run(t, block[2:3])
	if s := newest(); len(sessions()) != 2 || !strings.Contains(s, "and now the docs") || !strings.Contains(s, `"type":"image"`) ||
		strings.TrimSpace(out) != "fake reply to: and now the docs" {
		t.Errorf("%s: %d sessions, the latest:\n%s\noutput:\n%s", block[2], len(sessions()), s, out)
	}
	out = e.run(t, block[3:4])
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], `{"type":"session"`) || len(lines) < 4 {
		t.Errorf("%s: the first line is not the session header:\n%s", block[3], out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "{") || !strings.HasSuffix(l, "}") {
			t.Errorf("%s: a line that is not JSON: %q", block[3], l)
		}
	}
	before := newest()
	out = e.run(t, block[4:5])
	if strings.Count(out, "nothing to compact") != 1 || newest() != before {
		t.Errorf("%s: want one 'nothing to compact' and the session unchanged:\n%s", block[4], out)
	}
	// A second exchange in that session (the README's -c line again), and
	// the /compact line compacts it with the default settings.
	e.run(t, block[2:3])
	e.run(t, block[4:5])
	after := newest()
	added := strings.TrimPrefix(after, before)
	if !strings.Contains(added, `"type":"compaction"`) || !strings.Contains(added, "focus on the parser") {
		t.Errorf("%s after a second exchange: the session gained %q", block[4], added)
	}
}

// TestREADMECompactWithoutKey runs the README's "Compact a long session
// without a key" line as written (its go run as the built prime, its /tmp
// path the test's), with no key and no model, and checks the paragraph
// after it: one compaction entry appended, the context shrinking by the
// figures it quotes, a summary of about the size it says, and its
// "session context" command showing the summary first.
func TestREADMECompactWithoutKey(t *testing.T) {
	e := newReadmeHome(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	subs := [][2]string{{"go run ./cmd/prime", "prime"}, {"/tmp/s.jsonl", file}}
	script := readmeScript(t, "gen-session --entries 5000 --seed 1 --out /tmp/s.jsonl", subs)
	out := e.run(t, []string{script})
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var last struct {
		Type    string `json:"type"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Type != "compaction" || len(lines) != 5002 {
		t.Fatalf("want the header, 5,000 entries and one compaction; %d lines, the last %q (%v)", len(lines), lines[len(lines)-1], err)
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, prose, _ := strings.Cut(string(readme), "### Compact a long session without a key")
	prose, _, _ = strings.Cut(prose, "\n## ")
	prose = strings.Join(strings.Fields(prose), " ")
	m := regexp.MustCompile(`context: ([\d,]+) tokens before, ([\d,]+) after`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(prose, "shrinking from "+m[1]+" to "+m[2]+" tokens") {
		t.Errorf("the README does not quote the context sizes printed (%q):\n%s", m, out)
	}
	about := regexp.MustCompile(`prints the summary, about ([\d,]+) tokens`).FindStringSubmatch(prose)
	if about == nil {
		t.Fatal("the README no longer says the summary's size")
	}
	said, _ := strconv.Atoi(strings.ReplaceAll(about[1], ",", ""))
	if got := (len(last.Summary) + 3) / 4; got < said*9/10 || got > said*11/10 {
		t.Errorf("the summary is about %d tokens, the README says about %d", got, said)
	}
	if !strings.Contains(out, last.Summary) {
		t.Error("the summary is not printed")
	}

	context := regexp.MustCompile("`go run ./cmd/prime (session context /tmp/s.jsonl)`").FindStringSubmatch(prose)
	if context == nil {
		t.Fatal("the README no longer shows the session context command")
	}
	rows := strings.Split(e.run(t, []string{"prime " + strings.Replace(context[1], "/tmp/s.jsonl", file, 1)}), "\n")
	if f := strings.Fields(rows[0]); len(f) < 3 || f[2] != "compactionSummary" {
		t.Errorf("the context does not start with the summary:\n%s", strings.Join(rows[:min(5, len(rows))], "\n"))
	}
}

// TestREADMEModelsJSON: each models.json the README shows inline (a local
// Ollama server) is read as it is written, listed by prime models with its
// context window, and with its address pointed at a fake Ollama server,
// "--model ollama/qwen3:8b", as the README goes on, converses with it with
// the entry's model id and key.
func TestREADMEModelsJSON(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := regexp.MustCompile("`(\\{\"providers\": \\{\"ollama\"[^`]*)`, then\\s+`--model ([^`]+)`").FindAllSubmatch(readme, -1)
	if len(shown) != 2 {
		t.Fatalf("the README shows %d Ollama models.json examples with a --model after them, this test knows 2", len(shown))
	}
	for _, ex := range shown {
		modelsJSON, flag := string(ex[1]), "--model "+string(ex[2])
		var doc struct {
			Providers map[string]struct {
				BaseURL string `json:"baseUrl"`
				APIKey  string `json:"apiKey"`
				Models  []struct {
					ID            string `json:"id"`
					ContextWindow int    `json:"contextWindow"`
				} `json:"models"`
			} `json:"providers"`
		}
		if err := json.Unmarshal([]byte(modelsJSON), &doc); err != nil {
			t.Fatalf("the README's models.json does not parse: %v\n%s", err, modelsJSON)
		}
		p := doc.Providers["ollama"]
		if len(p.Models) != 1 || flag != "--model ollama/"+p.Models[0].ID {
			t.Fatalf("the README's %s does not name its models.json's model:\n%s", flag, modelsJSON)
		}
		want := p.Models[0]

		e := newReadmeHome(t)
		writeFile(t, filepath.Join(e.agentDir(), "models.json"), modelsJSON)
		listed := ""
		for _, l := range strings.Split(e.run(t, []string{"prime models"}), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "ollama/"+want.ID {
				listed = f[1]
			}
		}
		if listed != numfmt.Commas(want.ContextWindow) {
			t.Errorf("prime models lists ollama/%s with the window %q, want %d", want.ID, listed, want.ContextWindow)
		}

		srv := llmtest.NewOpenAI(t, llmtest.FlavorOllama)
		srv.Reply(llmtest.Text("Hello from qwen."))
		origin := strings.TrimSuffix(p.BaseURL, "/v1")
		writeFile(t, filepath.Join(e.agentDir(), "models.json"), strings.Replace(modelsJSON, origin, srv.URL(), 1))
		if out := e.run(t, []string{`prime -p ` + flag + ` "say hello"`}); strings.TrimSpace(out) != "Hello from qwen." {
			t.Errorf("prime -p %s: %q", flag, out)
		}
		r := srv.LastRequest()
		if r == nil || r.Model() != want.ID || r.Header.Get("Authorization") != "Bearer "+p.APIKey {
			t.Errorf("the request: %+v", r)
		}
	}
}

// TestREADMEAuthFile: prime login stores the key in ~/.prime/agent/auth.json
// in the shape the README shows, with mode 0600; a stored key comes before
// the environment's, and a key "!command" is the command's output, as the
// README says, for requests to the provider.
func TestREADMEAuthFile(t *testing.T) {
	para := readmeParagraph(t, "No key in the environment?")
	shape := regexp.MustCompile("`(\\{\"anthropic\": [^`]*)`").FindStringSubmatch(para)
	if shape == nil || !strings.Contains(para, "`~/.prime/agent/auth.json` with mode 0600") {
		t.Fatalf("the README's paragraph on /login changed: %s", para)
	}
	e := newReadmeHome(t)
	const key = "sk-ant-readme-1234"
	e.run(t, []string{"echo " + key + " | prime login anthropic"})
	authFile := filepath.Join(e.agentDir(), "auth.json")
	fi, err := os.Stat(authFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json: %v %v", err, fi)
	}
	var got, want map[string]map[string]string
	data, _ := os.ReadFile(authFile)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("auth.json: %v\n%s", err, data)
	}
	if err := json.Unmarshal([]byte(strings.Replace(shape[1], `"..."`, `"`+key+`"`, 1)), &want); err != nil {
		t.Fatalf("the README's auth.json: %v", err)
	}
	if len(got) != len(want) || got["anthropic"]["type"] != want["anthropic"]["type"] || got["anthropic"]["key"] != want["anthropic"]["key"] {
		t.Errorf("auth.json is %s, the README shows %s", data, shape[1])
	}

	srv := llmtest.NewAnthropic(t)
	writeFile(t, filepath.Join(e.agentDir(), "models.json"), `{"providers": {"anthropic": {"baseUrl": "`+srv.URL()+`"}}}`)
	for _, c := range []struct{ stored, sent string }{
		{key, key},
		{"!printf sk-ant-from-a-command", "sk-ant-from-a-command"},
	} {
		raw, _ := json.Marshal(map[string]map[string]string{"anthropic": {"type": "api_key", "key": c.stored}})
		writeFile(t, authFile, string(raw))
		srv.Reply(llmtest.Text("ok"))
		e.run(t, []string{`ANTHROPIC_API_KEY=sk-ant-environment prime -p --model anthropic/claude-haiku-4-5 "hi"`})
		r := srv.LastRequest()
		if r == nil {
			t.Fatalf("stored %q: no request reached the server", c.stored)
		}
		if got := r.Header.Get("x-api-key"); got != c.sent {
			t.Errorf("stored %q: the request carried %q, want %q", c.stored, got, c.sent)
		}
	}
}
