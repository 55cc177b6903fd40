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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/internal/proctest"
	"github.com/prime-agent/prime/internal/sessiontest"
	"github.com/prime-agent/prime/llm/llmtest"
	"github.com/prime-agent/prime/session"
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
	norm := newNormaliser([2]string{s.srv.Model().BaseURL, "$FAKE_SERVER"}, [2]string{session.EncodeCWD(s.project), "$PROJECT_SESSIONS"},
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

// TestRPCCompact: compact with instructions sends them to the summarizer,
// answers pi's result after compaction_end, and writes one entry.
func TestRPCCompact(t *testing.T) {
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	p := s.start(t)
	p.converse("first question", "second question")
	p.send(`{"id":"c","type":"compact","customInstructions":"remember both questions"}`)
	got := p.until(func(l rpcLine) bool { return l.answers("c") })
	if k := lineKinds(got); k != "compaction_start compaction_end response:c" {
		t.Errorf("compact: %s", k)
	}
	r := got[len(got)-1]
	for _, key := range []string{"summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "usage", "details"} {
		if _, ok := r.data()[key]; !ok {
			t.Errorf("no %s in %s", key, r.raw)
		}
	}
	if !strings.Contains(r.str("summary"), "remember both questions") {
		t.Errorf("summary %q", r.str("summary"))
	}
	if reqs := s.summaryRequests(); len(reqs) == 0 || !strings.Contains(reqs[0].LastUserText(), "remember both questions") {
		t.Error("the summary request lacks the instructions")
	}
	path := p.call("s", `{"id":"s","type":"get_state"}`).str("sessionFile")
	if k := sessionKinds(t, path); strings.Count(k, "compaction") != 1 || !strings.HasSuffix(k, "compaction") {
		t.Errorf("session %s", k)
	}
	loaded, _ := session.Load(path)
	pl, _ := loaded.Leaf().Payload()
	if c, ok := pl.(*session.CompactionEntry); !ok || c.CustomInstructions != "remember both questions" {
		t.Errorf("the compaction entry %s", sessiontest.Line(t, loaded.Leaf()))
	}
	tree := p.call("t", `{"id":"t","type":"get_tree"}`)
	if shape := treeShape(tree.data()["tree"].([]any)); !strings.HasSuffix(shape, "(compaction)))))))") {
		t.Errorf("tree %s", shape)
	}
	if r := p.call("c2", `{"id":"c2","type":"compact"}`); r.ok() || !strings.Contains(r.errText(), "already compacted") {
		t.Errorf("compact again: %s", r.raw)
	}
}

// TestRPCPinsAndUndo: with the real binary, a pin reaches the model after
// three compactions in a row, the session file holds it, uncompact brings
// back the messages of before the last compaction, and
// get_session_stats measures the context by kind.
func TestRPCPinsAndUndo(t *testing.T) {
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	p := s.start(t)
	p.converse("first question")
	if r := p.call("p", `{"id":"p","type":"pin","text":"never push to main"}`); !r.ok() {
		t.Fatalf("pin: %s", r.raw)
	}
	var before rpcLine
	for i := range 3 {
		p.converse(fmt.Sprintf("question %d", i+2))
		before = p.call("m", `{"id":"m","type":"get_messages"}`)
		if r := p.call("c", `{"id":"c","type":"compact"}`); !r.ok() {
			t.Fatalf("compaction %d: %s", i+1, r.raw)
		}
	}
	p.converse("after three compactions")
	var last *llmtest.Request
	for _, r := range s.srv.Requests() {
		if !strings.Contains(r.LastUserText(), "<conversation>") {
			last = r
		}
	}
	if last == nil || !strings.Contains(last.System(), "never push to main") {
		t.Errorf("the pin is not in the last request's system prompt")
	}
	path := p.call("st", `{"id":"st","type":"get_state"}`).str("sessionFile")
	stats := p.call("ss", `{"id":"ss","type":"get_session_stats"}`)
	b, _ := stats.data()["contextBreakdown"].(map[string]any)
	if parts, _ := b["parts"].([]any); len(parts) != 10 || b["total"].(float64) <= 0 || b["windowSource"] != "model" {
		t.Errorf("contextBreakdown: %v", b)
	}

	// Undo the last compaction: the messages are those before it, and the
	// exchange made since is left on its branch.
	u := p.call("u", `{"id":"u","type":"uncompact"}`)
	if !u.ok() || u.data()["left"] != 2.0 {
		t.Fatalf("uncompact: %s", u.raw)
	}
	after := p.call("m2", `{"id":"m2","type":"get_messages"}`)
	if a, b := fmt.Sprint(after.data()["messages"]), fmt.Sprint(before.data()["messages"]); a != b {
		t.Errorf("messages after the undo:\n%s\nbefore the compaction:\n%s", a, b)
	}
	if r := p.call("u2", `{"id":"u2","type":"uncompact","compactionId":"deadbeef"}`); r.ok() || r.errText() != "Entry not found: deadbeef" {
		t.Errorf("uncompact of an unknown id: %s", r.raw)
	}
	if r := p.call("g", `{"id":"g","type":"get_pins"}`); fmt.Sprint(r.data()["pins"]) == "[]" {
		t.Errorf("the pin made before the compactions is gone: %s", r.raw)
	}
	loaded, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if pins := compaction.Pins(loaded.LeafPath()); len(pins) != 1 || pins[0].Text != "never push to main" {
		t.Errorf("the file's pins: %+v", pins)
	}
}

// TestRPCAutoCompaction: a reply over the threshold compacts after the
// run, and a context overflow compacts and retries, with pi's events in
// pi's order (pi-agent-reference §1.10).
func TestRPCAutoCompaction(t *testing.T) {
	// The threshold is 200,000 - 199,700 = 300 tokens.
	s := newRPCSetup(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 5, "reserveTokens": 199700}})
	s.script(
		llmtest.Stream(llmtest.Text("short"), llmtest.Usage(50, 2)),
		llmtest.Stream(llmtest.Text("a long answer"), llmtest.Usage(400, 5)),
		llmtest.Stream(llmtest.Text("short again"), llmtest.Usage(50, 2)),
		llmtest.Overflow(),
		llmtest.Stream(llmtest.Text("after the compaction"), llmtest.Usage(60, 3)),
	)
	p := s.start(t)
	p.converse("first")
	p.send(`{"id":"1","type":"prompt","message":"second, answered at length"}`)
	got := p.settle()
	if k := lineKinds(got); !strings.HasSuffix(k, "message_end turn_end agent_end compaction_start compaction_end agent_settled") {
		t.Errorf("threshold: %s", k)
	}
	for _, l := range got {
		if (l.is("compaction_start") || l.is("compaction_end")) && l.field("reason") != "threshold" {
			t.Errorf("threshold: %s", l.raw)
		}
		if l.is("compaction_end") && (l.field("willRetry") != false || l.field("result") == nil) {
			t.Errorf("threshold: %s", l.raw)
		}
	}
	p.converse("third")
	p.send(`{"id":"3","type":"prompt","message":"fourth, which overflows"}`)
	got = p.settle()
	var names []string
	for _, l := range got {
		if !l.is("message_update") {
			names = append(names, l.typ())
		}
	}
	want := "message_end turn_end agent_end entry_appended compaction_start compaction_end agent_start turn_start message_start message_end turn_end agent_end agent_settled"
	if k := strings.Join(names, " "); !strings.HasSuffix(k, want) {
		t.Errorf("overflow:\n%s\nwant it to end with\n%s", k, want)
	}
	for _, l := range got {
		switch {
		case l.is("message_end") && l.message()["role"] == "assistant" && l.message()["stopReason"] == "error":
		case l.is("agent_end") && l.field("willRetry") != false:
			t.Errorf("overflow: %s", l.raw)
		case l.is("entry_appended"):
			if e := l.field("entry").(map[string]any); e["type"] != "context_edit" {
				t.Errorf("overflow: %s", l.raw)
			}
		case l.is("compaction_start") && l.field("reason") != "overflow":
			t.Errorf("overflow: %s", l.raw)
		case l.is("compaction_end") && (l.field("reason") != "overflow" || l.field("willRetry") != true):
			t.Errorf("overflow: %s", l.raw)
		}
	}
	if text := p.call("t", `{"id":"t","type":"get_last_assistant_text"}`).str("text"); text != "after the compaction" {
		t.Errorf("last text %q", text)
	}
}

// TestRPCNavigateTree: navigate_tree back to an earlier question with a
// summary and a label: the branch-summary events, pi's result shape, the
// tree and the entries after it, and the next prompt continues from there.
func TestRPCNavigateTree(t *testing.T) {
	s := newRPCSetup(t, nil)
	p := s.start(t)
	p.converse("first question", "second question")
	second := userEntry(t, p.call("e", `{"id":"e","type":"get_entries"}`), "second question")
	p.send(fmt.Sprintf(`{"id":"n","type":"navigate_tree","targetId":%q,"summarize":true,"customInstructions":"mention the second question","label":"checkpoint"}`, second))
	got := p.until(func(l rpcLine) bool { return l.answers("n") })
	if k := lineKinds(got); k != "branch_summary_start branch_summary_end response:n" {
		t.Errorf("navigate_tree: %s", k)
	}
	r := got[len(got)-1]
	if r.str("editorText") != "second question" || r.data()["cancelled"] != false {
		t.Errorf("navigate_tree: %s", r.raw)
	}
	sum, _ := r.data()["summaryEntry"].(map[string]any)
	if sum["type"] != "branch_summary" || !strings.Contains(sum["summary"].(string), "mention the second question") {
		t.Errorf("summary entry %v", sum)
	}
	tree := p.call("t", `{"id":"t","type":"get_tree"}`)
	shape := treeShape(tree.data()["tree"].([]any))
	if !strings.HasSuffix(shape, "user(assistant(user(assistant),branch_summary[checkpoint](label))))))") {
		t.Errorf("tree %s", shape)
	}
	_, ks := entryList(p.call("e2", `{"id":"e2","type":"get_entries"}`))
	if tail := strings.Join(ks[len(ks)-2:], " "); tail != "branch_summary label" {
		t.Errorf("entries end with %s", tail)
	}
	if leaf := tree.data()["leafId"]; leaf == nil || leaf == sum["id"] {
		t.Errorf("leaf %v: the label entry is the leaf", leaf)
	}
	p.send(`{"id":"p","type":"prompt","message":"a different second question"}`)
	p.settle()
	if last := s.srv.LastRequest().Text(); !strings.Contains(last, "mention the second question") || strings.Contains(last, "reply to: second question") {
		t.Error("the next request does not continue from the summary")
	}
	if r := p.call("n2", `{"id":"n2","type":"navigate_tree","targetId":"nowhere"}`); r.ok() || r.errText() != "Entry not found: nowhere" {
		t.Errorf("unknown target: %s", r.raw)
	}
}

// TestRPCForkAndSwitch: fork starts a session holding what came before a
// user message; switch_session goes back; get_entries and get_tree follow
// each move.
func TestRPCForkAndSwitch(t *testing.T) {
	s := newRPCSetup(t, nil)
	p := s.start(t)
	p.converse("first question", "second question")
	original := p.call("s", `{"id":"s","type":"get_state"}`).str("sessionFile")
	all := p.call("e", `{"id":"e","type":"get_entries"}`)
	allIDs, _ := entryList(all)
	second := userEntry(t, all, "second question")
	r := p.call("f", fmt.Sprintf(`{"id":"f","type":"fork","entryId":%q}`, second))
	if r.str("text") != "second question" || r.data()["cancelled"] != false {
		t.Errorf("fork: %s", r.raw)
	}
	forked := p.call("s2", `{"id":"s2","type":"get_state"}`).str("sessionFile")
	if forked == "" || forked == original {
		t.Fatalf("the fork is %q (the original %q)", forked, original)
	}
	ids, ks := entryList(p.call("e2", `{"id":"e2","type":"get_entries"}`))
	if i := slices.Index(allIDs, second); !slices.Equal(ids, allIDs[:i]) {
		t.Errorf("the fork holds %v (%v), want %v", ids, ks, allIDs[:i])
	}
	tree := p.call("t2", `{"id":"t2","type":"get_tree"}`)
	if tree.data()["leafId"] != ids[len(ids)-1] || !strings.HasSuffix(treeShape(tree.data()["tree"].([]any)), "user(assistant))))") {
		t.Errorf("the fork's tree %s", tree.raw)
	}
	p.send(`{"id":"p","type":"prompt","message":"another second question"}`)
	p.settle()
	if k := sessionKinds(t, forked); !strings.HasSuffix(k, "system user assistant user assistant") {
		t.Errorf("the fork %s", k)
	}
	if r := p.call("w", fmt.Sprintf(`{"id":"w","type":"switch_session","sessionPath":%q}`, original)); r.data()["cancelled"] != false {
		t.Errorf("switch: %s", r.raw)
	}
	back, _ := entryList(p.call("e3", `{"id":"e3","type":"get_entries"}`))
	if !slices.Equal(back, allIDs) {
		t.Errorf("back in the original: %v, want %v", back, allIDs)
	}
	if tree := p.call("t3", `{"id":"t3","type":"get_tree"}`); tree.data()["leafId"] != allIDs[len(allIDs)-1] {
		t.Errorf("the original's leaf %v", tree.data()["leafId"])
	}
	forks := p.call("fm", `{"id":"fm","type":"get_fork_messages"}`).data()["messages"].([]any)
	if len(forks) != 2 || forks[1].(map[string]any)["entryId"] != second {
		t.Errorf("fork messages %v", forks)
	}
	for _, c := range [][2]string{
		{`{"id":"x1","type":"fork","entryId":"nowhere"}`, "cannot fork"},
		{fmt.Sprintf(`{"id":"x2","type":"fork","entryId":%q}`, allIDs[len(allIDs)-1]), "fork from a user message"},
		{fmt.Sprintf(`{"id":"x3","type":"switch_session","sessionPath":%q}`, filepath.Join(s.project, "none.jsonl")), "no such file"},
	} {
		var id map[string]any
		json.Unmarshal([]byte(c[0]), &id)
		if r := p.call(id["id"].(string), c[0]); r.ok() || !strings.Contains(r.errText(), c[1]) {
			t.Errorf("%s: %s", c[0], r.raw)
		}
	}
}

// TestRPCBadInput: over the real pipes, every kind of bad input gets its
// failure response, two prompts sent together are both kept, a last line
// without a newline still counts, and the session file stays valid.
func TestRPCBadInput(t *testing.T) {
	s := newRPCSetup(t, nil)
	gate := filepath.Join(s.project, "go")
	s.script(bashCall("c1", waitUntilFile(gate)))
	p := s.start(t)
	// Two prompts together, before anything ran: the second is queued.
	p.send(`{"id":"1","type":"prompt","message":"first"}`, `{"id":"2","type":"prompt","message":"second"}`)
	got := p.until(func(l rpcLine) bool { return l.answers("2") })
	if got[0].str("disposition") != "started" || got[len(got)-1].str("disposition") != "queued" {
		t.Errorf("two prompts together: %s … %s", got[0].raw, got[len(got)-1].raw)
	}
	p.until(func(l rpcLine) bool { return l.is("tool_execution_start") })
	for _, c := range []struct{ line, command, err string }{
		{"{\"id\":\"x\",\"type\":\"prompt\",\"message\":\"unterminated", "parse", "Failed to parse command: "},
		{`{"id":"b1","type":"get_everything"}`, "get_everything", "Unknown command: get_everything"},
		{`{"id":"b2","type":"prompt"}`, "prompt", `missing "message"`},
		{`{"id":"b3","type":"set_follow_up_mode","mode":1}`, "set_follow_up_mode", `"mode" must be a string, not a number`},
		{`{"id":"b4","type":"prompt","message":"while busy"}`, "prompt", `"streamingBehavior"`},
		{`{"id":"b5","type":"navigate_tree","targetId":"x"}`, "navigate_tree", "busy"},
		{`{"id":"b6","type":"fork"}`, "fork", `missing "entryId"`},
	} {
		p.send(c.line)
		r := p.until(func(l rpcLine) bool { return l.is("response") })
		if l := r[len(r)-1]; l.ok() || l.field("command") != c.command || !strings.Contains(l.errText(), c.err) {
			t.Errorf("%s: %s", c.line, l.raw)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.settle()
	state := p.call("s", `{"id":"s","type":"get_state"}`)
	path := state.str("sessionFile")
	if got := sessiontest.UserTexts(t, path); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("user messages %q", got)
	}
	// The last line has no newline: it is a command all the same.
	if _, err := io.WriteString(p.in, `{"id":"last","type":"get_last_assistant_text"}`); err != nil {
		t.Fatal(err)
	}
	code, rest := p.exit()
	if code != 0 || len(rest) != 1 || !rest[0].answers("last") || rest[0].str("text") != "reply to: second" {
		t.Errorf("exit %d, %d lines after the end of input: %v", code, len(rest), rest)
	}
	sessionKinds(t, path)
}

// TestRPCShutdown: the end of input and SIGTERM/SIGHUP abort the run, wait
// for it, and exit 0/143/129 with the session file complete; a second
// signal exits at once.
func TestRPCShutdown(t *testing.T) {
	for _, c := range []struct {
		name string
		stop func(p *rpcProc)
		code int
	}{
		{"end of input", func(p *rpcProc) { p.in.Close() }, 0},
		{"SIGTERM", func(p *rpcProc) { p.cmd.Process.Signal(syscall.SIGTERM) }, 143},
		{"SIGHUP", func(p *rpcProc) { p.cmd.Process.Signal(syscall.SIGHUP) }, 129},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newRPCSetup(t, nil)
			s.script(bashCall("c1", "sleep 60"))
			p := s.start(t)
			path := p.call("s", `{"id":"s","type":"get_state"}`).str("sessionFile")
			p.send(`{"id":"p","type":"prompt","message":"wait a minute"}`)
			p.until(func(l rpcLine) bool { return l.is("tool_execution_start") })
			c.stop(p)
			code, rest := p.wait()
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr: %s)", code, c.code, p.stderr)
			}
			if len(rest) == 0 || !rest[len(rest)-1].is("agent_settled") || rest[len(rest)-1].field("aborted") != true {
				t.Errorf("the last lines: %s", lineKinds(rest))
			}
			if k := sessionKinds(t, path); !strings.HasSuffix(k, "user assistant toolResult") {
				t.Errorf("session %s", k)
			}
		})
	}

	t.Run("second signal", func(t *testing.T) {
		// A session_compact_failed hook that takes its time holds the
		// shutdown after the first SIGTERM (after-events get a few
		// seconds); the second exits before it ends.
		// The hook writes its pid to marker and runs while hold exists;
		// hold is removed when the test ends, and then the hook must end.
		hookPID := 0
		t.Cleanup(func() {
			if hookPID > 0 {
				proctest.WaitGone(t, hookPID)
			}
		})
		hold := t.TempDir()
		marker := filepath.Join(t.TempDir(), "started")
		hook := filepath.Join(t.TempDir(), "hook.sh")
		script := fmt.Sprintf("#!/bin/sh\ncat >/dev/null\necho $$ > '%[1]s.tmp' && mv '%[1]s.tmp' '%[1]s'\nwhile [ -d '%[2]s' ]; do sleep 0.02; done\n", marker, hold)
		if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		s := newRPCSetup(t, map[string]any{
			"hooks":      []any{map[string]any{"event": "session_compact_failed", "command": hook}},
			"compaction": map[string]any{"keepRecentTokens": 1},
		})
		held := make(chan struct{})
		t.Cleanup(func() { close(held) }) // before the fake server closes
		s.srv.Handle(func(r *llmtest.Request) llmtest.Reply {
			if strings.Contains(r.LastUserText(), "<conversation>") {
				<-held
			}
			return s.answer(r)
		})
		p := s.start(t)
		p.send(`{"type":"prompt","message":"one"}`)
		p.settle()
		p.send(`{"id":"c","type":"compact"}`)
		p.until(func(l rpcLine) bool { return l.is("compaction_start") })
		waitFor(t, "the summary request", func() bool { return len(s.summaryRequests()) > 0 })
		p.cmd.Process.Signal(syscall.SIGTERM)
		waitForFile(t, marker)
		pid, err := os.ReadFile(marker)
		if hookPID, err = strconv.Atoi(strings.TrimSpace(string(pid))); err != nil {
			t.Fatalf("the hook's pid: %q", pid)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		code, rest := p.wait()
		if code != 143 {
			t.Errorf("exit %d, want 143", code)
		}
		for _, l := range rest {
			if l.answers("c") || l.is("compaction_end") {
				t.Errorf("the shutdown went on after the second signal: %s", l.raw)
			}
		}
	})
}

// TestRPCArguments: RPC mode takes its messages on standard input; @file
// arguments fail (exit 1, as in pi) and messages are a usage error.
func TestRPCArguments(t *testing.T) {
	s := newRPCSetup(t, nil)
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"@notes.txt"}, 1, "@file arguments are not taken in RPC mode"},
		{[]string{"hello"}, 2, "takes its messages as prompt commands"},
	} {
		p := s.start(t, c.args...)
		code, rest := p.wait()
		if code != c.code || len(rest) != 0 || !strings.Contains(p.stderr.String(), c.err) {
			t.Errorf("%v: exit %d, %d lines, stderr %q", c.args, code, len(rest), p.stderr)
		}
	}
}
