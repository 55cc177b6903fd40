package main

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/session/sessiontest"
	"github.com/prime-agent/prime/settings"
)

// rpcTimeout guards against a process that never answers: a deadlock fails
// the test instead of hanging it. No test asserts how fast anything is.
const rpcTimeout = 90 * time.Second

// rpcSetup is an agentEnv whose fake server answers from a script.
type rpcSetup struct {
	*agentEnv
	// replies answers the conversation's requests in order (then "reply
	// to: <last user text>"); summary requests get a summary naming the
	// instructions they carry.
	mu      sync.Mutex
	replies []llmtest.Reply
}

// newRPCSetup makes the directories, with settings (retries off, so a
// failing fake fails at once, and those given).
func newRPCSetup(t *testing.T, settings map[string]any) *rpcSetup {
	t.Helper()
	doc := map[string]any{"retry": map[string]any{"enabled": false}}
	for k, v := range settings {
		doc[k] = v
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := &rpcSetup{agentEnv: newAgentEnv(t, llmtest.NewAnthropic(t), 0, string(b))}
	s.srv.Handle(s.answer)
	return s
}

// script queues replies for the conversation's next requests.
func (s *rpcSetup) script(replies ...llmtest.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

func (s *rpcSetup) answer(r *llmtest.Request) llmtest.Reply {
	text := r.LastUserText()
	if strings.Contains(text, "<conversation>") {
		sum := "## Goal\nSummarized by the fake model."
		if i := strings.Index(text, "<user-instructions>"); i >= 0 {
			instr, _, _ := strings.Cut(text[i+len("<user-instructions>"):], "</user-instructions>")
			sum += "\n\n## Critical Context\n- " + strings.TrimSpace(instr)
		}
		return llmtest.Stream(llmtest.Text(sum), llmtest.Usage(100, 20))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) > 0 {
		next := s.replies[0]
		s.replies = s.replies[1:]
		return next
	}
	return llmtest.Stream(llmtest.Text("reply to: "+text), llmtest.Usage(50, 8))
}

// summaryRequests returns the requests for a summary.
func (s *rpcSetup) summaryRequests() []*llmtest.Request {
	var out []*llmtest.Request
	for _, r := range s.srv.Requests() {
		if strings.Contains(r.LastUserText(), "<conversation>") {
			out = append(out, r)
		}
	}
	return out
}

// rpcProc is "prime --mode rpc" running over pipes.
type rpcProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan rpcLine
	stderr *proctest.Buffer
	// log, when set, records every line sent and received.
	log func(dir, line string)
	// exited is closed when the process has ended; code is its status.
	exited chan struct{}
	code   int
}

// rpcLine is one line of output, decoded.
type rpcLine struct {
	raw string
	m   map[string]any
}

func (l rpcLine) typ() string             { s, _ := l.m["type"].(string); return s }
func (l rpcLine) is(typ string) bool      { return l.typ() == typ }
func (l rpcLine) answers(id string) bool  { return l.is("response") && l.m["id"] == id }
func (l rpcLine) ok() bool                { b, _ := l.m["success"].(bool); return b }
func (l rpcLine) errText() string         { s, _ := l.m["error"].(string); return s }
func (l rpcLine) data() map[string]any    { d, _ := l.m["data"].(map[string]any); return d }
func (l rpcLine) str(key string) string   { s, _ := l.data()[key].(string); return s }
func (l rpcLine) field(key string) any    { return l.m[key] }
func (l rpcLine) message() map[string]any { m, _ := l.m["message"].(map[string]any); return m }

// start runs prime --mode rpc with args in the project.
func (s *rpcSetup) start(t *testing.T, args ...string) *rpcProc {
	t.Helper()
	cmd := s.command(append([]string{"--mode", "rpc", "--no-context-files"}, args...)...)
	p := &rpcProc{t: t, cmd: cmd, lines: make(chan rpcLine, 10000), stderr: &proctest.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.in = in
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(p.lines)
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				l := rpcLine{raw: strings.TrimSuffix(line, "\n")}
				if !strings.HasSuffix(line, "\n") || json.Unmarshal([]byte(l.raw), &l.m) != nil {
					l.m = nil
				}
				p.lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		<-read // Wait closes the pipe: read it to the end first
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
			if ws, ok := ee.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
				p.code = -1
			}
		case err != nil:
			p.code = -2
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.in.Close()
		select {
		case <-p.exited:
		case <-time.After(rpcTimeout):
			cmd.Process.Kill()
			t.Error("prime did not exit after its input ended")
		}
	})
	return p
}

// send writes commands, each on its line, in one write.
func (p *rpcProc) send(cmds ...string) {
	p.t.Helper()
	for _, c := range cmds {
		if p.log != nil {
			p.log(">", c)
		}
	}
	if _, err := io.WriteString(p.in, strings.Join(cmds, "\n")+"\n"); err != nil {
		p.t.Fatalf("writing to prime: %v (stderr: %s)", err, p.stderr)
	}
}

// next returns the next line, failing the test on one that is not a whole
// JSON object.
func (p *rpcProc) next() rpcLine {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("prime's output ended (stderr: %s)", p.stderr)
		}
		if l.m == nil {
			p.t.Fatalf("not a JSON line: %.300q", l.raw)
		}
		if p.log != nil {
			p.log("<", l.raw)
		}
		return l
	case <-time.After(rpcTimeout):
		p.t.Fatalf("no line from prime (stderr: %s)", p.stderr)
		return rpcLine{}
	}
}

// until reads lines until one matches, and returns them all.
func (p *rpcProc) until(match func(rpcLine) bool) []rpcLine {
	p.t.Helper()
	var got []rpcLine
	for {
		l := p.next()
		got = append(got, l)
		if match(l) {
			return got
		}
	}
}

// call sends one command with id and returns its response (the lines before
// it are read and dropped; callers that want them use until).
func (p *rpcProc) call(id, cmd string) rpcLine {
	p.t.Helper()
	p.send(cmd)
	got := p.until(func(l rpcLine) bool { return l.answers(id) })
	return got[len(got)-1]
}

// converse sends each message as a prompt and waits until the agent
// settles.
func (p *rpcProc) converse(messages ...string) {
	p.t.Helper()
	for _, m := range messages {
		p.send(fmt.Sprintf(`{"type":"prompt","message":%q}`, m))
		p.settle()
	}
}

// settle reads lines until the agent settles.
func (p *rpcProc) settle() []rpcLine {
	p.t.Helper()
	return p.until(func(l rpcLine) bool { return l.is("agent_settled") })
}

// exit closes prime's input and returns its exit status (-1: killed by a
// signal), with the lines it wrote meanwhile.
func (p *rpcProc) exit() (int, []rpcLine) {
	p.t.Helper()
	p.in.Close()
	return p.wait()
}

// wait returns the exit status once prime has ended, with the lines it
// wrote meanwhile.
func (p *rpcProc) wait() (int, []rpcLine) {
	p.t.Helper()
	var rest []rpcLine
	for l := range p.lines {
		if l.m == nil {
			p.t.Errorf("not a JSON line: %.300q", l.raw)
			continue
		}
		if p.log != nil {
			p.log("<", l.raw)
		}
		rest = append(rest, l)
	}
	select {
	case <-p.exited:
	case <-time.After(rpcTimeout):
		p.t.Fatal("prime did not exit")
	}
	return p.code, rest
}

// lineKinds lists the types of lines (responses as "response:ID", runs of
// message_update as one).
func lineKinds(ls []rpcLine) string {
	var out []string
	for _, l := range ls {
		k := l.typ()
		if k == "response" {
			k += fmt.Sprintf(":%v", l.m["id"])
		}
		if len(out) > 0 && k == "message_update" && out[len(out)-1] == k {
			continue
		}
		out = append(out, k)
	}
	return strings.Join(out, " ")
}

// sessionKinds lists a session file's entries (sessiontest.Kinds) as one
// string.
func sessionKinds(t *testing.T, path string) string {
	t.Helper()
	return strings.Join(sessiontest.Kinds(t, path), " ")
}

// entryList returns the ids of get_entries' answer, with their kinds.
func entryList(l rpcLine) (ids, ks []string) {
	for _, e := range l.data()["entries"].([]any) {
		m := e.(map[string]any)
		ids = append(ids, m["id"].(string))
		k := m["type"].(string)
		if msg, ok := m["message"].(map[string]any); ok {
			k = msg["role"].(string)
		}
		ks = append(ks, k)
	}
	return ids, ks
}

// userEntry returns the id of the first user message whose text is text in
// a get_entries answer.
func userEntry(t *testing.T, entries rpcLine, text string) string {
	t.Helper()
	for _, e := range entries.data()["entries"].([]any) {
		m := e.(map[string]any)
		msg, _ := m["message"].(map[string]any)
		if msg == nil || msg["role"] != "user" {
			continue
		}
		for _, c := range msg["content"].([]any) {
			if c.(map[string]any)["text"] == text {
				return m["id"].(string)
			}
		}
	}
	t.Fatalf("no user message %q in %.500s", text, entries.raw)
	return ""
}

// treeShape writes get_tree's tree as "id(child,child)" with labels.
func treeShape(nodes []any) string {
	var parts []string
	for _, n := range nodes {
		m := n.(map[string]any)
		e := m["entry"].(map[string]any)
		s := e["type"].(string)
		if msg, ok := e["message"].(map[string]any); ok {
			s = msg["role"].(string)
		}
		if l, ok := m["label"].(string); ok {
			s += "[" + l + "]"
		}
		if kids := m["children"].([]any); len(kids) > 0 {
			s += "(" + treeShape(kids) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// waitForFile waits until path exists: a tool or hook the test runs says
// it got there.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	waitFor(t, path, func() bool { _, err := os.Stat(path); return err == nil })
}

// toolCall is a reply calling tool name with args.
func toolCall(id, name, args string) llmtest.Reply {
	return llmtest.Stream(llmtest.ToolCall(id, name, args), llmtest.Usage(60, 10))
}

func textReply(text string) llmtest.Reply {
	return llmtest.Stream(llmtest.Text(text), llmtest.Usage(80, 6))
}

// normaliser rewrites what changes from run to run in a transcript: entry
// and session ids, times, temporary paths and the fake server's port, and
// drops durations.
type normaliser struct {
	names map[string]string
	n     map[string]int
	paths [][2]string
}

var (
	reUUID     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reEntryID  = regexp.MustCompile(`\\?"[0-9a-f]{8}\\?"`) // in a string too, its quotes escaped
	reISO      = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d[.-]\d{3}Z`)
	reMillis   = regexp.MustCompile(`"timestamp":1\d{12}`)
	reDuration = regexp.MustCompile(`,"durationMs":\d+`)
)

func newNormaliser(paths ...[2]string) *normaliser {
	return &normaliser{names: map[string]string{}, n: map[string]int{}, paths: paths}
}

func (n *normaliser) name(kind, s string) string {
	if v, ok := n.names[s]; ok {
		return v
	}
	n.n[kind]++
	v := fmt.Sprintf("%s%d", kind, n.n[kind])
	n.names[s] = v
	return v
}

func (n *normaliser) line(s string) string {
	for _, p := range n.paths {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	s = reUUID.ReplaceAllStringFunc(s, func(u string) string { return n.name("session-", u) })
	s = reISO.ReplaceAllString(s, "<time>")
	s = reMillis.ReplaceAllString(s, `"timestamp":0`)
	s = reDuration.ReplaceAllString(s, "") // present only when it took a millisecond or more
	return reEntryID.ReplaceAllStringFunc(s, func(id string) string {
		q := `"`
		if strings.HasPrefix(id, `\`) {
			q = `\"`
		}
		return q + n.name("e", strings.Trim(id, `\"`)) + q
	})
}

// fixedLengthDir makes an empty directory, removed when the test ends,
// whose path has the same length on every run.
func fixedLengthDir(t *testing.T) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("prime-golden-%x", b))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestRPCGolden runs one whole RPC session and compares every line sent and
// received with testdata/rpc-session.golden (go test -update rewrites it).
func TestRPCGolden(t *testing.T) {
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	// The system prompt names the project directory, and its size is in
	// the answers: the directory's name must not vary in length, as
	// t.TempDir's does.
	s.project = fixedLengthDir(t)
	if err := os.WriteFile(filepath.Join(s.project, "notes.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.script(
		toolCall("call_read_1", "read", `{"path":"notes.txt"}`),
		textReply("The notes list alpha and beta."),
		textReply("You are welcome."),
		textReply("Still here."),
	)
	var transcript strings.Builder
	norm := newNormaliser([2]string{s.srv.Model().BaseURL, "$FAKE_SERVER"}, [2]string{settings.EncodeCWD(s.project), "$PROJECT_SESSIONS"},
		[2]string{s.agentDir, "$AGENT"}, [2]string{s.project, "$PROJECT"})
	p := s.start(t, "--tools", "read", "--system-prompt", "You are a test assistant.")
	p.log = func(dir, line string) { fmt.Fprintf(&transcript, "%s %s\n", dir, norm.line(line)) }

	p.call("1", `{"id":"1","type":"get_state"}`)
	p.send(`{"id":"2","type":"prompt","message":"What is in notes.txt?"}`)
	p.settle()
	p.call("3", `{"id":"3","type":"get_messages"}`)
	p.send(`{"id":"4","type":"steer","message":"Thanks"}`)
	p.settle()
	p.call("5", `{"id":"5","type":"set_session_name","name":"golden"}`)
	p.call("6", `{"id":"6","type":"get_session_stats"}`)
	p.call("7", `{"id":"7","type":"compact","customInstructions":"keep the file names"}`)
	p.send(`{"id":"8","type":"prompt","message":"And now?"}`)
	p.settle()
	p.call("9", `{"id":"9","type":"get_fork_messages"}`)
	entries := p.call("10", `{"id":"10","type":"get_entries"}`)
	again := userEntry(t, entries, "And now?")
	p.call("11", fmt.Sprintf(`{"id":"11","type":"navigate_tree","targetId":%q,"summarize":true,"label":"retry"}`, again))
	p.call("12", `{"id":"12","type":"get_tree"}`)
	first := userEntry(t, entries, "What is in notes.txt?")
	state := p.call("13", `{"id":"13","type":"get_state"}`)
	original := state.str("sessionFile")
	p.call("14", fmt.Sprintf(`{"id":"14","type":"fork","entryId":%q}`, first))
	p.call("15", `{"id":"15","type":"get_state"}`)
	p.call("16", `{"id":"16","type":"get_entries"}`)
	p.call("17", fmt.Sprintf(`{"id":"17","type":"switch_session","sessionPath":%q}`, original))
	p.call("18", fmt.Sprintf(`{"id":"18","type":"get_entries","since":%q}`, again))
	p.call("19", `{"id":"19","type":"bash","command":"printf hi"}`)
	// What survives compaction: a pin, the receipt of the compaction on
	// the path, its undoing (the branch summary and label made since stay
	// on the side branch with it; the pin is carried over and its id still
	// names it).
	pin := p.call("p1", `{"id":"p1","type":"pin","text":"keep the notes short"}`)
	p.call("p2", `{"id":"p2","type":"get_pins"}`)
	p.call("p3", `{"id":"p3","type":"get_compaction_receipt"}`)
	p.call("p4", `{"id":"p4","type":"uncompact"}`)
	p.call("p5", `{"id":"p5","type":"get_pins"}`)
	pinID, _ := pin.data()["pin"].(map[string]any)["id"].(string)
	p.call("p6", fmt.Sprintf(`{"id":"p6","type":"unpin","pinId":%q}`, pinID))
	p.call("p7", `{"id":"p7","type":"uncompact"}`)
	for i, c := range []string{
		`"type":"set_thinking_level","level":"high"`,
		`"type":"get_available_thinking_levels"`,
		`"type":"cycle_thinking_level"`,
		`"type":"get_available_models"`,
		`"type":"set_model","provider":"fake","modelId":"fake-model"`,
		`"type":"cycle_model"`,
		`"type":"set_steering_mode","mode":"all"`,
		`"type":"set_follow_up_mode","mode":"one-at-a-time"`,
		`"type":"set_auto_compaction","enabled":false`,
		`"type":"set_auto_retry","enabled":false`,
		`"type":"abort_retry"`,
		`"type":"abort"`,
		`"type":"clear_queue"`,
		`"type":"get_last_assistant_text"`,
		`"type":"get_commands"`,
		`"type":"export_html"`,
		`"type":"new_session"`,
		`"type":"get_state"`,
		`"type":"launch"`,
		`"type":"prompt"`,
	} {
		id := fmt.Sprint(20 + i)
		p.call(id, fmt.Sprintf(`{"id":%q,%s}`, id, c))
	}
	p.send(`{"type":"get_state"`)
	p.next()
	code, rest := p.exit()
	if code != 0 || len(rest) != 0 {
		t.Errorf("exit %d after the end of input, with %d more lines (stderr: %s)", code, len(rest), p.stderr)
	}
	golden.Check(t, "rpc-session.golden", transcript.String())
	// The switches and modes the client set are saved, as pi saves them.
	saved, err := os.ReadFile(filepath.Join(s.agentDir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SteeringMode string                  `json:"steeringMode"`
		FollowUpMode string                  `json:"followUpMode"`
		Compaction   struct{ Enabled *bool } `json:"compaction"`
		Retry        struct{ Enabled *bool } `json:"retry"`
	}
	if err := json.Unmarshal(saved, &doc, json.MatchCaseInsensitiveNames(true)); err != nil {
		t.Fatal(err)
	}
	if doc.SteeringMode != "all" || doc.FollowUpMode != "one-at-a-time" || doc.Compaction.Enabled == nil || *doc.Compaction.Enabled || doc.Retry.Enabled == nil || *doc.Retry.Enabled {
		t.Errorf("settings.json after the session:\n%s", saved)
	}
}

// bashCall is a reply calling the bash tool with command.
func bashCall(id, command string) llmtest.Reply {
	args, _ := json.Marshal(map[string]string{"command": command})
	return toolCall(id, "bash", string(args))
}

// waitUntilFile is a shell command that waits until the file exists (or
// its directory is gone: the test ended without creating it).
func waitUntilFile(path string) string {
	return fmt.Sprintf("while [ ! -e '%s' ] && [ -d '%s' ]; do sleep 0.02; done; echo opened", path, filepath.Dir(path))
}

func TestRPCToolCalls(t *testing.T) {
	s := newRPCSetup(t, nil)
	if err := os.WriteFile(filepath.Join(s.project, "notes.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.script(
		llmtest.Stream(llmtest.Text("Looking."), llmtest.ToolCall("c1", "read", `{"path":"notes.txt"}`), llmtest.ToolCall("c2", "bash", `{"command":"echo from-bash"}`)),
		textReply("Done: alpha, from-bash."),
	)
	p := s.start(t)
	p.send(`{"id":"p","type":"prompt","message":"look around"}`)
	got := p.settle()
	var notUpdates []rpcLine // bash's output updates come when they come
	for _, l := range got {
		if !l.is("tool_execution_update") {
			notUpdates = append(notUpdates, l)
		}
	}
	k := lineKinds(notUpdates)
	for _, want := range []string{
		"response:p agent_start turn_start message_start message_end message_start message_end message_start message_update",
		"message_end tool_execution_start tool_execution_start tool_execution_end tool_execution_end",
		"tool_execution_end message_start message_end message_start message_end turn_end turn_start message_start message_update",
		"message_end turn_end agent_end agent_settled",
	} {
		if !strings.Contains(k, want) {
			t.Errorf("lines:\n%s\nlack %q", k, want)
		}
	}
	results := map[string]string{}
	for _, l := range got {
		if l.is("tool_execution_end") {
			res := l.field("result").(map[string]any)
			text := res["content"].([]any)[0].(map[string]any)["text"].(string)
			results[l.field("toolName").(string)] = text
			if l.field("isError") != false {
				t.Errorf("%s", l.raw)
			}
		}
	}
	if !strings.Contains(results["read"], "alpha") || !strings.Contains(results["bash"], "from-bash") {
		t.Errorf("tool results %q", results)
	}
	state := p.call("s", `{"id":"s","type":"get_state"}`)
	path := state.str("sessionFile")
	if got := sessionKinds(t, path); !strings.HasSuffix(got, "user assistant toolResult toolResult assistant") {
		t.Errorf("session %s", got)
	}
	// get_entries is the file.
	ids, _ := entryList(p.call("e", `{"id":"e","type":"get_entries"}`))
	loaded, _ := session.Load(path)
	var want []string
	for _, e := range loaded.Entries() {
		want = append(want, e.ID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("get_entries %v, the file %v", ids, want)
	}
	if code, _ := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestRPCSteerAndFollowUp: while a tool runs, a bare prompt is refused and
// steer, follow_up and prompt-with-streamingBehavior are queued, then
// delivered in pi's order; while idle, steer and follow_up start a run.
func TestRPCSteerAndFollowUp(t *testing.T) {
	s := newRPCSetup(t, nil)
	gate := filepath.Join(s.project, "go")
	s.script(bashCall("c1", waitUntilFile(gate)))
	p := s.start(t)
	p.send(`{"id":"p","type":"prompt","message":"start"}`)
	p.until(func(l rpcLine) bool { return l.is("tool_execution_start") })
	if r := p.call("busy", `{"id":"busy","type":"prompt","message":"hello?"}`); r.ok() || !strings.Contains(r.errText(), `"streamingBehavior"`) {
		t.Errorf("prompt while busy: %s", r.raw)
	}
	for _, c := range [][2]string{
		{"s", `{"id":"s","type":"steer","message":"steer this way"}`},
		{"f", `{"id":"f","type":"follow_up","message":"then this"}`},
		{"q", `{"id":"q","type":"prompt","message":"and this","streamingBehavior":"followUp"}`},
	} {
		if r := p.call(c[0], c[1]); r.str("disposition") != "queued" {
			t.Errorf("%s: %s", c[0], r.raw)
		}
	}
	st := p.call("st", `{"id":"st","type":"get_state"}`)
	if st.data()["isStreaming"] != true || st.data()["pendingMessageCount"] != 3.0 {
		t.Errorf("state %s", st.raw)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.settle()
	path := p.call("s2", `{"id":"s2","type":"get_state"}`).str("sessionFile")
	if got, want := sessiontest.UserTexts(t, path), []string{"start", "steer this way", "then this", "and this"}; !slices.Equal(got, want) {
		t.Errorf("user messages %q, want %q", got, want)
	}
	// The steer came after the tool's result, before the next request.
	if k := sessionKinds(t, path); !strings.Contains(k, "user assistant toolResult user assistant user assistant user assistant") {
		t.Errorf("session %s", k)
	}
	for _, c := range []string{`{"id":"i1","type":"steer","message":"idle steer"}`, `{"id":"i2","type":"follow_up","message":"idle follow-up"}`} {
		p.send(c)
		got := p.settle()
		if got[0].str("disposition") != "started" || !got[1].is("agent_start") {
			t.Errorf("%s while idle: %s", c, lineKinds(got))
		}
	}
}

// TestRPCAbort: abort mid-stream keeps the partial reply, aborted; abort
// mid-tool gives every call its result; each answers after the run
// settled, and the session goes on.
func TestRPCAbort(t *testing.T) {
	s := newRPCSetup(t, nil)
	var parts []llmtest.Part
	for i := range 40 {
		parts = append(parts, llmtest.Text(fmt.Sprintf("part %d of a long answer. ", i)))
	}
	s.script(llmtest.Reply{Parts: parts, Delay: 250 * time.Millisecond}, bashCall("c1", "sleep 60"))
	p := s.start(t)
	path := p.call("s", `{"id":"s","type":"get_state"}`).str("sessionFile")

	p.send(`{"id":"p1","type":"prompt","message":"talk at length"}`)
	p.until(func(l rpcLine) bool { return l.is("message_update") })
	got := p.until(func(l rpcLine) bool { p.send(`{"id":"a1","type":"abort"}`); return true })
	got = append(got, p.until(func(l rpcLine) bool { return l.answers("a1") })...)
	k := lineKinds(got)
	if !strings.HasSuffix(k, "message_end turn_end agent_end agent_settled response:a1") {
		t.Errorf("abort mid-stream: %s", k)
	}
	for _, l := range got {
		if l.is("message_end") && l.message()["stopReason"] != "aborted" {
			t.Errorf("the reply ended %s", l.raw)
		}
		if l.is("agent_settled") && l.field("aborted") != true {
			t.Errorf("%s", l.raw)
		}
	}
	if k := sessionKinds(t, path); !strings.HasSuffix(k, "user assistant") {
		t.Errorf("session after abort mid-stream: %s", k)
	}

	p.send(`{"id":"p2","type":"prompt","message":"run something slow"}`)
	p.until(func(l rpcLine) bool { return l.is("tool_execution_start") })
	got = p.until(func(l rpcLine) bool { p.send(`{"id":"a2","type":"abort"}`); return true })
	got = append(got, p.until(func(l rpcLine) bool { return l.answers("a2") })...)
	if k := lineKinds(got); !strings.HasSuffix(k, "tool_execution_end message_start message_end turn_end agent_end agent_settled response:a2") {
		t.Errorf("abort mid-tool: %s", k)
	}
	if k := sessionKinds(t, path); !strings.HasSuffix(k, "user assistant user assistant toolResult") {
		t.Errorf("session after abort mid-tool: %s", k)
	}
	p.send(`{"id":"p3","type":"prompt","message":"still there?"}`)
	if got := p.settle(); got[len(got)-1].field("aborted") != false {
		t.Errorf("after the aborts: %s", lineKinds(got))
	}
	if k := sessionKinds(t, path); !strings.HasSuffix(k, "toolResult user assistant") {
		t.Errorf("session after the next prompt: %s", k)
	}
}
