package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// runPrimeStdin is runPrime with stdin.
func runPrimeStdin(t *testing.T, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &app{
		stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] },
	})
	return code, out.String(), errb.String()
}

// transcriptSession copies agent/testdata/transcript.jsonl (two turns with
// reasoning, an image, tool calls, an error and a user's shell command; the
// leaf a6) into a temporary file.
func transcriptSession(t *testing.T) (string, []byte) {
	t.Helper()
	return copySession(t, filepath.Join("..", "..", "agent", "testdata", "transcript.jsonl"))
}

// beforeCompactJSON is what the tests read of a session_before_compact
// event a command hook received.
type beforeCompactJSON struct {
	Preparation struct {
		MessagesToSummarize jsontext.Value `json:"messagesToSummarize"`
		TurnPrefixMessages  jsontext.Value `json:"turnPrefixMessages"`
	} `json:"preparation"`
	Transcript *struct {
		Reasoning  *bool   `json:"reasoning"`
		ToolBodies *int    `json:"toolBodies"`
		History    *string `json:"history"`
		TurnPrefix *string `json:"turnPrefix"`
	} `json:"transcript"`
}

// TestTranscriptIsTheSummaryRequest: for one session, the text "prime
// compact" sent its summarizer (the history, then the split turn's prefix),
// the text its command hook received in session_before_compact, and what
// "prime transcript" prints, from the file's entries and from the event's
// message arrays on stdin, are the same bytes; for an OpenAI-compatible
// summarizer (reasoning kept) and an Anthropic one (left out).
func TestTranscriptIsTheSummaryRequest(t *testing.T) {
	for _, api := range []string{"openai", "anthropic"} {
		t.Run(api, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t)
			if api == "anthropic" {
				srv = llmtest.NewAnthropic(t)
			}
			srv.Handle(summaryReply)
			env := fakeEnv(t, srv)
			dir := t.TempDir()
			eventFile := filepath.Join(dir, "event.json")
			script := filepath.Join(dir, "record.sh")
			if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > \"$1\"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeSettingsFile(t, filepath.Join(env[settings.AgentDirEnv], "settings.json"), map[string]any{"hooks": []map[string]any{
				{"event": "session_before_compact", "command": script, "args": []string{eventFile}},
			}})

			path, before := transcriptSession(t)
			cwd := t.TempDir()
			if code, _, errOut := runPrime(t, env, "compact", path, "--model", "fake/fake-model", "--keep-recent-tokens", "1", "--cwd", cwd); code != 0 {
				t.Fatalf("prime compact: exit %d: %s", code, errOut)
			}
			checkCompactedFile(t, path, before, mustLeaf(t, path))
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want the history's and the turn prefix's", len(reqs))
			}
			history, prefix := llmtest.Conversation(t, reqs[0]), llmtest.Conversation(t, reqs[1])
			if strings.Contains(history, "[Assistant reasoning]") != (api == "openai") {
				t.Errorf("reasoning in the %s request: %v", api, !(api == "openai"))
			}

			// The command hook's event.
			data, err := os.ReadFile(eventFile)
			if err != nil {
				t.Fatal(err)
			}
			var ev beforeCompactJSON
			if err := json.Unmarshal(data, &ev); err != nil {
				t.Fatal(err)
			}
			tr := ev.Transcript
			if tr == nil || tr.History == nil || tr.TurnPrefix == nil || tr.Reasoning == nil || tr.ToolBodies == nil {
				t.Fatalf("the event's transcript: %s", data)
			}
			if *tr.History != history || *tr.TurnPrefix != prefix || *tr.Reasoning != (api == "openai") || *tr.ToolBodies != 3 {
				t.Errorf("the event's transcript differs from the requests:\nhistory:\n%s\n\nturn prefix:\n%s", *tr.History, *tr.TurnPrefix)
			}

			// prime transcript, from the file and from the arrays.
			for _, c := range []struct {
				name, stdin string
				args        []string
				want        string
			}{
				{"history entries", "", []string{path, "--from", "u1", "--to", "r3"}, history},
				{"turn prefix entries", "", []string{path, "--from", "u2", "--to", "r5"}, prefix},
				{"history on stdin", string(ev.Preparation.MessagesToSummarize), []string{"-"}, history},
				{"turn prefix on stdin", string(ev.Preparation.TurnPrefixMessages), nil, prefix},
			} {
				code, out, errOut := runPrimeStdin(t, env, c.stdin, append([]string{"transcript", "--model", "fake/fake-model", "--cwd", cwd}, c.args...)...)
				if code != 0 || out != c.want+"\n" {
					t.Errorf("%s: exit %d %s\n%s\nwant the request's:\n%s", c.name, code, errOut, out, c.want)
				}
			}
		})
	}
}

// userMessage is a user message with text.
func userMessage(text string) *llm.UserMessage {
	return &llm.UserMessage{Content: []llm.Content{llm.Text{Text: text}}, Timestamp: 8}
}

// readCall is a call of the read tool on path.
func readCall(id, path string) llm.ToolCall {
	args, err := llm.ArgumentsOf(map[string]any{"path": path})
	if err != nil {
		panic(err)
	}
	return llm.ToolCall{ID: id, Name: "read", Arguments: args}
}

// mustLeaf returns the leaf id of the session file at path.
func mustLeaf(t *testing.T, path string) string {
	t.Helper()
	s, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s.LeafID()
}

// TestTranscriptCommand: the inputs, the options, --json and the errors.
func TestTranscriptCommand(t *testing.T) {
	path, _ := transcriptSession(t)
	env := fakeEnv(t, nil)
	cwd := t.TempDir()
	transcript := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		return runPrimeStdin(t, env, stdin, append([]string{"transcript", "--cwd", cwd}, args...)...)
	}

	t.Run("json", func(t *testing.T) {
		code, out, errOut := transcript("", path, "--json", "--tool-bodies", "1")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got transcriptJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		s, _ := session.Load(path)
		c, _ := s.Context("")
		opts := compaction.TranscriptOptions{Reasoning: true, ToolBodies: 1}
		want := compaction.Transcript(session.ToLLM(c.Messages), opts)
		tokens := 0
		for _, m := range c.Messages {
			tokens += session.EstimateTokens(m)
		}
		// The session's model, openai/gpt-test, is not in the registry: it
		// is judged by its provider and id (not Claude).
		if got.Transcript != want || got.Tokens != compaction.TranscriptTokens(want) || got.Tokens == 0 || got.Messages != 14 || got.MessageTokens != tokens ||
			!got.Reasoning || got.ToolBodies != 1 || got.Model == nil || *got.Model != "openai/gpt-test" || got.File == nil || *got.File != path ||
			len(got.EntryIDs) != 14 || got.EntryIDs[0] != "u1" || got.EntryIDs[13] != "a6" {
			t.Errorf("got %s", out)
		}
		if strings.Count(got.Transcript, "]: [tool result]") != 4 {
			t.Errorf("--tool-bodies 1 should leave 4 of 5 results without a body:\n%s", got.Transcript)
		}
	})

	t.Run("reasoning and model family", func(t *testing.T) {
		msgs := `[{"role":"user","content":"hi","timestamp":1},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"yes"}],"timestamp":2}]`
		for _, c := range []struct {
			args []string
			want string
		}{
			{nil, "[User]: hi\n\n[Assistant reasoning]: hmm\n\n[Assistant]: yes\n"},
			{[]string{"--reasoning=false"}, "[User]: hi\n\n[Assistant]: yes\n"},
			{[]string{"--model", "anthropic/claude-sonnet-4-5"}, "[User]: hi\n\n[Assistant]: yes\n"},
		} {
			if code, out, errOut := transcript(msgs, c.args...); code != 0 || out != c.want {
				t.Errorf("%v: exit %d %s: %q, want %q", c.args, code, errOut, out, c.want)
			}
		}
		// compaction.model decides when no --model is given.
		writeSettingsFile(t, filepath.Join(env[settings.AgentDirEnv], "settings.json"), map[string]any{"compaction": map[string]any{"model": "anthropic/claude-sonnet-4-5"}})
		defer os.Remove(filepath.Join(env[settings.AgentDirEnv], "settings.json"))
		if code, out, errOut := transcript(msgs, "--json"); code != 0 || !strings.Contains(out, `"reasoning": false`) || !strings.Contains(out, `"model": "anthropic/claude-sonnet-4-5"`) {
			t.Errorf("compaction.model: exit %d %s\n%s", code, errOut, out)
		}
		if code, out, errOut := transcript(msgs, "--reasoning", "--json"); code != 0 || !strings.Contains(out, `"reasoning": true`) || !strings.Contains(out, `"model": null`) {
			t.Errorf("--reasoning: exit %d %s\n%s", code, errOut, out)
		}
	})

	t.Run("the context at a leaf after a compaction", func(t *testing.T) {
		p, _ := transcriptSession(t)
		if code, _, errOut := runPrime(t, env, "compact", p, "--offline", "--keep-recent-tokens", "1", "--cwd", cwd); code != 0 {
			t.Fatalf("compact: %d %s", code, errOut)
		}
		code, out, errOut := transcript("", p)
		if code != 0 || !strings.HasPrefix(out, "[User]: Earlier parts of this conversation were condensed") || !strings.HasSuffix(out, "[Assistant]: Fixed: the coupon now comes off before tax, and TestCouponRegression covers it. go test passes.\n") {
			t.Errorf("exit %d %s\n%s", code, errOut, out)
		}
		// --leaf goes back before it.
		if code, out, _ := transcript("", p, "--leaf", "a1"); code != 0 || strings.Contains(out, "condensed") || !strings.HasSuffix(out, "[Assistant tool calls]: read#call_1(path=\"shop/price.go\")\n") {
			t.Errorf("--leaf a1: exit %d\n%s", code, out)
		}
	})

	t.Run("empty", func(t *testing.T) {
		if code, out, errOut := transcript("[]"); code != 0 || out != "" || errOut != "" {
			t.Errorf("exit %d, %q, %q", code, out, errOut)
		}
		if code, out, _ := transcript(" [ ] ", "--json"); code != 0 || !strings.Contains(out, `"transcript": ""`) || !strings.Contains(out, `"entryIds": []`) {
			t.Errorf("exit %d\n%s", code, out)
		}
	})

	t.Run("errors", func(t *testing.T) {
		for _, c := range []struct {
			stdin string
			args  []string
			code  int
			want  string
		}{
			{"", []string{path, "--leaf", "a1", "--from", "u1"}, exitBadUsage, "--leaf and --from/--to exclude each other"},
			{"", []string{path, "--model", "fake/x", "--reasoning"}, exitBadUsage, "--model and --reasoning exclude each other"},
			{"", []string{path, "--tool-bodies", "-1"}, exitBadUsage, "--tool-bodies must not be negative"},
			{"", []string{path, path}, exitBadUsage, "got 2 arguments"},
			{"[]", []string{"-", "--to", "a1"}, exitBadUsage, "--leaf, --from and --to choose entries of a session FILE"},
			{"", []string{path, "--leaf", "nope"}, exitBadUsage, `--leaf: no entry with id "nope"`},
			{"", []string{path, "--from", "a6", "--to", "a3"}, exitBadUsage, "--from a6 is not on the path to a3"},
			{"", []string{path, "--model", "fake/nope"}, exitBadUsage, `--model: unknown model "fake/nope"`},
			{"", []string{filepath.Join(cwd, "missing.jsonl")}, exitBadUsage, "missing.jsonl"},
			{`{"role":"user"}`, nil, exitBadUsage, "stdin: want a JSON array of messages"},
			{`[{"role":"user","content":"a"}] []`, nil, exitBadUsage, "stdin: want one JSON array; more follows it"},
			{`[{"role":"user","content":"a"},`, nil, exitBadUsage, "stdin: line 1"},
			{`[{"role":"wizard","content":"a"}]`, nil, exitBadUsage, `stdin: message 0: Prime does not know the role "wizard"`},
			{`[{"role":"user","content":7}]`, nil, exitBadUsage, "stdin: message 0:"},
		} {
			code, out, errOut := transcript(c.stdin, c.args...)
			if code != c.code || out != "" || !strings.Contains(errOut, c.want) {
				t.Errorf("%v <<< %q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, c.stdin, code, out, errOut, c.code, c.want)
			}
		}
	})
}

// FuzzTranscriptStdin: any stdin is read without panicking; an array that
// decodes serializes.
func FuzzTranscriptStdin(f *testing.F) {
	for _, s := range []string{
		`[]`, `[{"role":"user","content":"hi","timestamp":1}]`, `{}`, `[1]`, `[{"role":"toolResult","toolCallId":"x","content":[]}]`,
		`[{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"read","arguments":{"path":"a"}}]},{"role":"toolResult","toolCallId":"1","toolName":"read","content":[{"type":"text","text":"b"}],"isError":false}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := decodeMessageArray(data)
		if err != nil {
			return
		}
		compaction.Transcript(session.ToLLM(msgs), compaction.TranscriptOptions{Reasoning: true, ToolBodies: 3})
	})
}
