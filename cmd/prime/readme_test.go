package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// readmeBlock returns the lines of the README's first fenced block that
// holds every one of texts.
func readmeBlock(t *testing.T, texts ...string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```")
	for i := 1; i < len(blocks); i += 2 {
		ok := true
		for _, text := range texts {
			ok = ok && strings.Contains(blocks[i], text)
		}
		if ok {
			_, body, _ := strings.Cut(blocks[i], "\n") // the info string
			return strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		}
	}
	t.Fatalf("the README has no block with %q", texts)
	return nil
}

// TestREADMECompactionExample reproduces the README's first example with
// the default settings: two exchanges in a git checkout at ~/acme-api, then
// "/compact focus on the auth refactor" in the terminal UI. The bottom of
// the screen must be the README's block, line for line.
func TestREADMECompactionExample(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the README's example runs the binary in tmux")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the README's example runs in a git checkout")
	}
	want := readmeBlock(t, "[compaction]", "Compacted from")
	bin := buildPrime(t)
	home := t.TempDir()
	project := filepath.Join(home, "acme-api")
	agentDir := filepath.Join(home, ".prime", "agent")
	for _, d := range []string{project, agentDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", project, "init", "-q", "-b", "main").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	runFakeModel(t, bin, agentDir, `{"replies": [
 {"parts": [{"text": "The check is in auth/token.go; I moved it to auth/check.go."}, {"usage": {"input": 2200, "output": 100}}]},
 {"parts": [{"text": "Agreed: keep the old Check as a wrapper so callers do not change."}, {"usage": {"input": 2270, "output": 60}}]},
 {"parts": [{"text": "## Goal\nRefactor the auth check.\n\n## Next Steps\n1. Keep Check as a wrapper."}, {"usage": {"input": 2630, "output": 50}}]}
]}`)

	s := &tmuxSession{t: t, socket: filepath.Join(home, "tmux.sock")}
	command := "env -u PRIME_CODING_AGENT_DIR HOME=" + home + " ANTHROPIC_API_KEY= OPENAI_API_KEY= " + bin + "; echo PRIME-EXITED $?; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", "90", "-y", "30", "-c", project, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	s.waitFor(bannerVersion(t, bin), "fake-model • medium")
	s.literal("move the token check into auth/check.go")
	s.keys("Enter")
	s.waitFor("I moved it to auth/check.go.")
	s.literal("keep the old signature")
	s.keys("Enter")
	s.waitFor("callers do not change.")
	s.literal("/compact focus on the auth refactor")
	s.keys("Enter")
	scr := s.waitFor("Instructions: focus on the auth refactor", "?/200k (auto)")
	lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	if len(lines) < len(want) {
		t.Fatalf("the screen is shorter than the README's block:\n%s", scr)
	}
	got := lines[len(lines)-len(want):]
	for i := range want {
		if strings.TrimRight(got[i], " ") != strings.TrimRight(want[i], " ") {
			t.Errorf("line %d of the README's block:\n  README %q\n  screen %q", i+1, want[i], got[i])
		}
	}
	if t.Failed() {
		t.Logf("the screen:\n%s", scr)
	}
	s.keys("C-c", "C-c")
	s.waitFor("PRIME-EXITED 0")
}

// readmeLinePattern turns a line of a README illustration into a pattern
// for the line Prime prints: its figures, its bar of kind letters and its
// sparkline stand for any, and the quoted user text after "kept from user:"
// for any text.
func readmeLinePattern(line string) *regexp.Regexp {
	line = strings.TrimRight(line, " ")
	if strings.Trim(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZ.:|") == "" {
		return regexp.MustCompile(`^[A-Z.:|]+$`)
	}
	// The indent is kept; the columns' padding, which depends on the
	// figures' widths, is any run of spaces.
	body := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(body)]
	tail := "$"
	if head, _, ok := strings.Cut(body, "kept from user: "); ok {
		body, tail = head+"kept from user: ", ".+$"
	}
	return regexp.MustCompile("^" + indent + readmePadding.ReplaceAllString(figures(body), " +") + tail)
}

var (
	readmeFigure    = regexp.MustCompile(`\d[\d,]*(\.\d+)?`)
	readmeSparkline = regexp.MustCompile(`[▁▂▃▄▅▆▇█]+`)
	readmePadding   = regexp.MustCompile(`  +`)
)

// figures quotes text for a pattern, with each number and run of
// sparkline bars standing for any.
func figures(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range regexp.MustCompile(readmeFigure.String()+"|"+readmeSparkline.String()).FindAllStringIndex(text, -1) {
		b.WriteString(regexp.QuoteMeta(text[last:m[0]]))
		if readmeSparkline.MatchString(text[m[0]:m[1]]) {
			b.WriteString(readmeSparkline.String())
		} else {
			b.WriteString(readmeFigure.String())
		}
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(text[last:]))
	return b.String()
}

// matchIllustration reports the first README line that the screen's lines
// do not follow, from the screen line matching the first README line on;
// a README line "  ..." stands for any lines. "" means they all match.
func matchIllustration(want, screen []string) string {
	start := -1
	first := readmeLinePattern(want[0])
	for i, l := range screen {
		if first.MatchString(strings.TrimRight(l, " ")) {
			start = i
			break
		}
	}
	if start < 0 {
		return want[0]
	}
	at, skipping := start, false
	for _, w := range want {
		if strings.TrimSpace(w) == "..." {
			skipping = true
			continue
		}
		p := readmeLinePattern(w)
		for skipping && at < len(screen) && !p.MatchString(strings.TrimRight(screen[at], " ")) {
			at++
		}
		if at >= len(screen) || !p.MatchString(strings.TrimRight(screen[at], " ")) {
			return w
		}
		at, skipping = at+1, false
	}
	return ""
}

// TestREADMEContextExample: the README's /context illustration is what
// /context draws, line for line but for the figures (and the lines its
// "..." leaves out), after two exchanges with the default settings, in a
// terminal wide enough that no line wraps.
func TestREADMEContextExample(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the README's example runs the binary in tmux")
	}
	want := readmeBlock(t, "[context]", "History ")
	bin := buildPrime(t)
	home := t.TempDir()
	project := filepath.Join(home, "project")
	agentDir := filepath.Join(home, ".prime", "agent")
	for _, d := range []string{project, agentDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	runFakeModel(t, bin, agentDir, `{"replies": [
 {"parts": [{"text": "The retry loop is in fetch.go."}, {"usage": {"input": 2200, "output": 100}}]},
 {"parts": [{"text": "It retries three times; a setting would make that configurable."}, {"usage": {"input": 2270, "output": 60}}]}
]}`)
	s := &tmuxSession{t: t, socket: filepath.Join(home, "tmux.sock")}
	command := "env -u PRIME_CODING_AGENT_DIR HOME=" + home + " ANTHROPIC_API_KEY= OPENAI_API_KEY= " + bin + "; echo PRIME-EXITED $?; sleep 600"
	s.run("new-session", "-d", "-s", "prime", "-x", "200", "-y", "60", "-c", project, command)
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	s.waitFor(bannerVersion(t, bin), "fake-model • medium")
	s.literal("where is the retry loop?")
	s.keys("Enter")
	s.waitFor("is in fetch.go.")
	s.literal("now make the retry loop configurable")
	s.keys("Enter")
	s.waitFor("make that configurable.")
	s.literal("/context")
	s.keys("Enter")
	scr := s.waitFor("[context]", "History ", "compactions")
	if bad := matchIllustration(want, strings.Split(scr, "\n")); bad != "" {
		t.Errorf("the screen does not follow the README's line %q:\n%s", bad, scr)
	}
	s.keys("C-c", "C-c")
	s.waitFor("PRIME-EXITED 0")
}

// rpcIllustration is a README block of RPC lines: the commands sent ("> "),
// each with the patterns of the lines it must be answered with, in order
// ("< "; a "..." in one stands for any text, and ids and numbers for any).
type rpcIllustration struct {
	command string
	want    []*regexp.Regexp
}

var (
	readmeID     = regexp.MustCompile(`"[0-9a-f]{8}"`)
	readmeNumber = regexp.MustCompile(`:\d+`)
)

// rpcBlock reads the README's block of RPC lines that holds marker.
func rpcBlock(t *testing.T, marker string) []rpcIllustration {
	t.Helper()
	var out []rpcIllustration
	for _, l := range readmeBlock(t, marker) {
		switch {
		case strings.HasPrefix(l, "> "):
			// The command is the line's first JSON value; a remark may follow.
			v, err := jsontext.NewDecoder(strings.NewReader(l[2:])).ReadValue()
			if err != nil {
				t.Fatalf("the README's RPC line %q: %v", l, err)
			}
			out = append(out, rpcIllustration{command: string(v)})
		case strings.HasPrefix(l, "< ") && len(out) > 0:
			text := strings.TrimSpace(l[2:])
			if strings.HasPrefix(text, "...") && strings.HasSuffix(text, "...") {
				continue // any lines
			}
			p := regexp.QuoteMeta(text)
			p = strings.ReplaceAll(p, `\.\.\.`, `.*`)
			p = readmeID.ReplaceAllString(p, `"[0-9a-f]{8}"`)
			p = readmeNumber.ReplaceAllString(p, `:\d+`)
			last := &out[len(out)-1]
			last.want = append(last.want, regexp.MustCompile("^"+p+"$"))
		default:
			t.Fatalf("the README's RPC block has a line that is neither sent nor received: %q", l)
		}
	}
	return out
}

// play sends each command of the illustration and reads prime's lines
// until the command's patterns have matched, in order; it returns the
// lines read.
func (p *rpcProc) play(ill []rpcIllustration) []rpcLine {
	p.t.Helper()
	var all []rpcLine
	for _, c := range ill {
		p.send(c.command)
		var seen []string
		for _, w := range c.want {
			for matched := false; !matched; {
				select {
				case l, ok := <-p.lines:
					if !ok {
						p.t.Fatalf("prime's output ended before a line like %s; after %s it wrote:\n%s", w, c.command, strings.Join(seen, "\n"))
					}
					seen, all = append(seen, l.raw), append(all, l)
					matched = w.MatchString(l.raw)
				case <-time.After(30 * time.Second):
					p.t.Fatalf("no line like %s after %s; prime wrote:\n%s", w, c.command, strings.Join(seen, "\n"))
				}
			}
		}
	}
	return all
}

// TestREADMERPCExamples plays the README's RPC illustrations against prime
// --mode rpc: a prompt answered and settled; then, with a compaction made,
// a pin and an undone compaction, each answered with the lines shown.
func TestREADMERPCExamples(t *testing.T) {
	first, second := rpcBlock(t, `"type":"prompt"`), rpcBlock(t, `"type":"pin"`)
	s := newRPCSetup(t, nil)
	p := s.start(t)
	p.play(first)
	p.converse("and now the tests")
	if r := p.call("c", `{"id":"c","type":"compact"}`); !r.ok() {
		t.Fatalf("compact: %s", r.raw)
	}
	lines := p.play(second)
	// The pin keeps its id through the undo.
	var pinID string
	for _, l := range lines {
		if l.answers("2") {
			pin, _ := l.data()["pin"].(map[string]any)
			pinID, _ = pin["id"].(string)
		}
	}
	pins, _ := p.call("g", `{"id":"g","type":"get_pins"}`).data()["pins"].([]any)
	if len(pins) != 1 || pinID == "" || pins[0].(map[string]any)["id"] != pinID {
		t.Errorf("the pin %q after the undo: %v", pinID, pins)
	}
	if code, _ := p.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
