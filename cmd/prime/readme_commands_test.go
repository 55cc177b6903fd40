package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeFlag is a flag as the README and the help write it: -x or --name.
var readmeFlag = regexp.MustCompile(`(?:^|[\s\[|(,])(--?[a-z][a-z-]*)`)

// helpFlags returns the flags prime's help for command (nil: the agent's
// own) declares: those of its Usage line and those its Flags list
// describes.
func helpFlags(t *testing.T, bin string, command []string) map[string]bool {
	t.Helper()
	out, err := exec.Command(bin, append(command, "--help")...).CombinedOutput()
	if err != nil {
		t.Fatalf("prime %s --help: %v\n%s", strings.Join(command, " "), err, out)
	}
	text := string(out)
	if len(command) > 0 {
		// A subcommand's help: its Usage line, then a Flags list with one
		// flag at the start of each entry.
		var b strings.Builder
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "Usage: ") || strings.HasPrefix(l, "  -") {
				b.WriteString(l + "\n")
			}
		}
		text = b.String()
	} else {
		// The agent's part of prime help, before the commands' list.
		text, _, _ = strings.Cut(text, "Usage: prime COMMAND")
	}
	flags := map[string]bool{}
	for _, m := range readmeFlag.FindAllStringSubmatch(text, -1) {
		flags[m[1]] = true
		if name, ok := strings.CutPrefix(m[1], "--"); ok && len(name) == 1 {
			flags["-"+name] = true // the flag package lists -o as --o
		}
	}
	return flags
}

// readmeCommands reads a README block of usage lines: each "prime WORDS…"
// line (and the indented lines continuing it, but for remarks after "#")
// gives a command, its words up to the first argument or flag, and the
// flags it is shown with.
func readmeCommands(block []string) map[string][]string {
	out := map[string][]string{}
	var last string
	for _, l := range block {
		l, _, _ = strings.Cut(l, "#")
		if strings.HasPrefix(l, "prime ") {
			var words []string
			for _, w := range strings.Fields(l)[1:] {
				if strings.ToLower(w) != w || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
					break
				}
				words = append(words, w)
			}
			last = strings.Join(words, " ")
		} else if strings.TrimSpace(l) == "" || last == "" {
			continue
		}
		for _, m := range readmeFlag.FindAllStringSubmatch(l, -1) {
			out[last] = append(out[last], m[1])
		}
		if _, ok := out[last]; !ok {
			out[last] = nil
		}
	}
	return out
}

// TestREADMECommandFlags: every command of the README's usage blocks (for
// compaction and branches, and for sessions) exists, and every flag the
// README shows it with is one its help declares, as is every flag its
// prose shows in code for prime mcp add and prime dev fake-llm; every flag
// of the README's print-mode table is one prime --help lists.
func TestREADMECommandFlags(t *testing.T) {
	bin := buildPrime(t)
	blocks := [][]string{
		readmeBlock(t, "prime compact FILE [--dry-run]", "prime branch  FILE"),
		readmeBlock(t, "prime session info", "prime session repair"),
	}
	n := 0
	for _, block := range blocks {
		for command, flags := range readmeCommands(block) {
			declared := helpFlags(t, bin, strings.Fields(command))
			for _, f := range flags {
				if !declared[f] {
					t.Errorf("the README shows prime %s with %s, which its help does not declare", command, f)
				}
			}
			n++
		}
	}
	if n < 15 {
		t.Errorf("read %d commands from the README's usage blocks; did their form change?", n)
	}

	// Flags the prose shows inline, in code, for one command.
	for _, inline := range []struct{ paragraph, command string }{
		{"`prime mcp add NAME --url URL", "mcp add"},
		{"(`--api anthropic` serves", "dev fake-llm"},
	} {
		text := readmeParagraph(t, inline.paragraph)
		declared := helpFlags(t, bin, strings.Fields(inline.command))
		found := 0
		for _, code := range readmeCode.FindAllStringSubmatch(text, -1) {
			if !strings.HasPrefix(code[1], "-") && !strings.HasPrefix(code[1], "prime "+inline.command+" ") {
				continue
			}
			for _, m := range readmeFlag.FindAllStringSubmatch(code[1], -1) {
				if found++; !declared[m[1]] {
					t.Errorf("the README shows prime %s with %s, which its help does not declare", inline.command, m[1])
				}
			}
		}
		if found < 3 {
			t.Errorf("found %d flags in the README's paragraph on prime %s; did it change?", found, inline.command)
		}
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(readme), "| flag | meaning |")
	table, _, _ = strings.Cut(table, "\n\n")
	agent := helpFlags(t, bin, nil)
	rows := 0
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, " | ")
		if len(cells) < 2 || !strings.HasPrefix(cells[0], "| `") {
			continue
		}
		for _, code := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[0], -1) {
			f := strings.Fields(code[1])[0]
			if strings.HasPrefix(f, "-") && !agent[f] {
				t.Errorf("the README's flag table has %s, which prime --help does not list", f)
			}
		}
		rows++
	}
	if rows < 8 {
		t.Errorf("read %d rows of the README's flag table; did its form change?", rows)
	}
}

// TestREADMESessionCommands runs each command of the README's sessions
// block in its plainest form (the options in brackets left out; FILE a
// generated session compacted once, so that uncompact has a compaction to
// undo; N and S small numbers), each on its own copy: every one succeeds.
func TestREADMESessionCommands(t *testing.T) {
	e := newReadmeHome(t)
	gen := filepath.Join(t.TempDir(), "g.jsonl")
	e.run(t, []string{"prime dev gen-session --entries 300 --seed 2 --out " + gen + " && prime compact " + gen + " --offline"})
	session, err := os.ReadFile(gen)
	if err != nil {
		t.Fatal(err)
	}
	optional := regexp.MustCompile(`\s*\[[^\]]*\]`)
	ran := 0
	for _, line := range readmeBlock(t, "prime session info", "prime session repair") {
		line, _, _ = strings.Cut(line, "#")
		if !strings.HasPrefix(line, "prime ") {
			continue
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "s.jsonl")
		writeFile(t, file, string(session))
		words := strings.Fields(optional.ReplaceAllString(line, ""))
		for i, w := range words {
			switch w {
			case "FILE":
				words[i] = file
			case "N":
				words[i] = "30"
			case "S":
				words[i] = "1"
			case "ID", "DIR":
				t.Fatalf("the README's %q needs a value this test does not make up", line)
			}
		}
		command := strings.Join(words, " ")
		if out := e.run(t, []string{"cd " + dir + " && " + command}); strings.TrimSpace(out) == "" {
			t.Errorf("%s printed nothing", command)
		}
		ran++
	}
	if ran < 15 {
		t.Errorf("ran %d of the README's session commands; did the block's form change?", ran)
	}
}

// TestREADMEWrongTypeWarning: the warning the README quotes for a field of
// the wrong type is the one Prime gives, word for word, for the file it
// describes (line 4 an entry c1 whose summary is the number 1234): on
// stderr where a command reads the session, and in session check's list.
func TestREADMEWrongTypeWarning(t *testing.T) {
	para := readmeParagraph(t, "An entry with a field of the wrong type")
	quoted := regexp.MustCompile("`(line 4: entry c1: /summary: 1234 [^`]*)`").FindStringSubmatch(para)
	if quoted == nil {
		t.Fatalf("the README's paragraph no longer quotes the warning: %s", para)
	}
	e := newReadmeHome(t)
	file := filepath.Join(t.TempDir(), "w.jsonl")
	writeFile(t, file, `{"type":"session","version":3,"id":"0190a000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"anthropic-messages","provider":"anthropic","model":"x","stopReason":"stop","timestamp":2}}
{"type":"compaction","id":"c1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","summary":1234,"firstKeptEntryId":"u1","tokensBefore":100}
`)
	out := e.run(t, []string{"prime session context " + file + " 2>&1 >/dev/null"})
	if strings.TrimSpace(out) != "warning: "+file+": "+quoted[1] {
		t.Errorf("session context warned %q, the README quotes %q", out, quoted[1])
	}
	out = e.run(t, []string{"prime session check " + file + " || echo exit $?"})
	want := file + ": " + quoted[1] + "\n1 problem; prime session repair " + file + " fixes what can be fixed\n"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "exit 1") {
		t.Errorf("session check printed %q, want %q and exit 1", out, want)
	}
}

// TestREADMEExitStatusNotASession: as the README's exit statuses say, a
// file that is not a session is bad input, status 2, for every command of
// its sessions block that reads FILE: nothing on stdout, and stderr says
// which file and why.
func TestREADMEExitStatusNotASession(t *testing.T) {
	if para := readmeParagraph(t, "Exit status: 0 success"); !strings.Contains(para, "2 bad usage or bad input (such as a file that is not a session)") {
		t.Fatalf("the README's exit statuses changed: %s", para)
	}
	e := newReadmeHome(t)
	file := filepath.Join(t.TempDir(), "notes.jsonl")
	writeFile(t, file, "hello\n")
	optional := regexp.MustCompile(`\s*\[[^\]]*\]`)
	ran := 0
	for _, line := range readmeBlock(t, "prime session info", "prime session repair") {
		line, _, _ = strings.Cut(line, "#")
		if !strings.HasPrefix(line, "prime ") || !strings.Contains(line, " FILE") || strings.Contains(line, "gen-session") {
			continue
		}
		command := strings.Replace(strings.Join(strings.Fields(optional.ReplaceAllString(line, "")), " "), "FILE", file, 1)
		out := e.run(t, []string{command + " 2>" + file + ".err && echo exit 0 || echo exit $?"})
		errOut, _ := os.ReadFile(file + ".err")
		if strings.TrimSpace(out) != "exit 2" || !strings.Contains(string(errOut), file+" is not a session file") {
			t.Errorf("%s: stdout %q, stderr %q; want exit 2 and why", command, out, errOut)
		}
		ran++
	}
	if ran < 12 {
		t.Errorf("ran %d commands; did the README's sessions block change?", ran)
	}
}
