package sessiongen

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/llm"
)

// A toolUse is a tool call with the result it gets and what that result
// means for the work.
type toolUse struct {
	call    llm.ToolCall
	result  *llm.ToolResultMessage
	outcome outcome
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitzero"`
	Limit  int    `json:"limit,omitzero"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type editArgs struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

type bashArgs struct {
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitzero"`
}

// use makes a call of the current model's id style and its result.
func (g *gen) use(name string, args any, text string, isError bool, o outcome) toolUse {
	id := "toolu_01" + base64.RawURLEncoding.EncodeToString(g.bytes(16))
	if g.model.provider == "openai" {
		id = "call_" + base64.RawURLEncoding.EncodeToString(g.bytes(18))
	}
	c := llm.ToolCall{ID: id, Name: name}
	c.Arguments, _ = llm.ArgumentsOf(args)
	r := &llm.ToolResultMessage{ToolCallID: id, ToolName: name, IsError: isError, Content: []llm.Content{llm.Text{Text: text}}}
	return toolUse{call: c, result: r, outcome: o}
}

// readCall reads a file of the project, whole or a window of its lines;
// sometimes a screenshot instead.
func (g *gen) readCall(path string, window bool) toolUse {
	if g.chance(g.o.ImageRate) {
		path = "docs/img/pass-table.png"
		g.read[path] = true
		u := g.use("read", readArgs{Path: path}, "Read image file [image/png]", false, readDone)
		u.result.Content = append(u.result.Content, g.image())
		return u
	}
	f := g.files[path]
	g.read[path] = true
	a := readArgs{Path: path}
	text := f.text
	if n := len(f.lines); window && n > 20 {
		start := g.rng.IntN(n - 10)
		a.Offset, a.Limit = start+1, 10+g.rng.IntN(60)
		end := min(n, start+a.Limit)
		text = strings.Join(f.lines[start:end], "\n")
		if end < n {
			text += fmt.Sprintf("\n\n[%d more lines in file. Use offset=%d to continue.]", n-end, end+1)
		}
	}
	return g.use("read", a, text, false, readDone)
}

// editCall replaces a few lines of path with themselves plus patch (or a
// small change when patch is empty). A missed edit sends text that is not
// in the file, as models do when they retype whitespace.
func (g *gen) editCall(path, patch string, miss bool) toolUse {
	f := g.files[path]
	g.modified[path] = true
	n := len(f.lines)
	start := g.rng.IntN(n)
	for i := 0; i < n && !editable(path, f.lines[start]); i++ {
		start = (start + 1) % n
	}
	k := 1 + g.rng.IntN(min(4, n-start))
	oldLines := f.lines[start : start+k]
	oldText := strings.Join(oldLines, "\n")
	if patch == "" {
		patch = addedLine(path)
	}
	newText := oldText + "\n" + patch
	if miss {
		sent := strings.Replace(oldText, "\t", "    ", 1)
		if sent == oldText {
			sent = oldText + " "
		}
		return g.use("edit", editArgs{Path: path, OldText: sent, NewText: newText}, "Could not find the exact text in "+path+". The old text must match exactly including all whitespace and newlines.", true, editMissed)
	}
	u := g.use("edit", editArgs{Path: path, OldText: oldText, NewText: newText}, "Successfully replaced text in "+path+".", false, edited)
	var diff strings.Builder
	line := start + 1
	if start > 0 {
		fmt.Fprintf(&diff, " %4d %s\n", line-1, f.lines[start-1])
	}
	for i, l := range oldLines {
		fmt.Fprintf(&diff, "-%4d %s\n", line+i, l)
	}
	for i, l := range strings.Split(newText, "\n") {
		fmt.Fprintf(&diff, "+%4d %s\n", line+i, l)
	}
	u.result.Details, _ = json.Marshal(struct {
		Diff             string `json:"diff"`
		FirstChangedLine int    `json:"firstChangedLine"`
	}{strings.TrimSuffix(diff.String(), "\n"), line + k})
	return u
}

// editable reports whether an edit may start at line: not a blank line,
// and in Go code a line of a function body.
func editable(path, line string) bool {
	if strings.TrimSpace(line) == "" {
		return false
	}
	if strings.HasSuffix(path, ".go") {
		return strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "\t\"") && !strings.HasPrefix(line, "\t}")
	}
	return true
}

// addedLine is a line an edit adds to a file of path's kind.
func addedLine(path string) string {
	switch {
	case strings.HasSuffix(path, "_test.go"):
		return "\t\t{\"across midnight\", \"Zürich\", 4},"
	case strings.HasSuffix(path, ".go"):
		return "\t// Times are UTC here; only the web UI converts them."
	case strings.HasSuffix(path, ".tsx"), strings.HasSuffix(path, ".ts"):
		return "  // The API sends RFC 3339 times in UTC."
	case strings.HasSuffix(path, ".md"):
		return "All times in the API are RFC 3339, in UTC."
	}
	return "# keep in sync with the Makefile"
}

// writeCall writes a whole file of the project.
func (g *gen) writeCall(path string) toolUse {
	f := g.files[path]
	g.modified[path] = true
	return g.use("write", writeArgs{Path: path, Content: f.text}, fmt.Sprintf("Successfully wrote %d bytes to %s", len(f.text), path), false, edited)
}

// bashCall runs a command with the output and exit code given; pi's bash
// tool reports a non-zero exit after the output, as an error.
func (g *gen) bashCall(cmd, out string, code int) toolUse {
	a := bashArgs{Command: cmd}
	if g.chance(0.2) {
		a.Timeout = 120
	}
	if code != 0 {
		out = strings.TrimRight(out, "\n") + fmt.Sprintf("\n\nCommand exited with code %d", code)
	}
	return g.use("bash", a, out, code != 0, nothing)
}

// testCall runs the task's tests, which fail while its problem is open.
func (g *gen) testCall(t *task, fail bool) toolUse {
	code, o := 0, testPassed
	if fail {
		code, o = 1, testFailed
	}
	u := g.bashCall(testCommand(t), g.testOutput(t, fail), code)
	u.outcome = o
	return u
}

// searchCall looks for the task's symbol in its files.
func (g *gen) searchCall(t *task) toolUse {
	var b strings.Builder
	for _, p := range t.files {
		for i, l := range g.files[p].lines {
			if strings.Contains(l, t.sym) && b.Len() < 1500 {
				fmt.Fprintf(&b, "%s:%d:%s\n", p, i+1, l)
			}
		}
	}
	cmd := "rg -n " + shellQuote(t.sym) + " " + t.files[0][:max(0, strings.LastIndexByte(t.files[0], '/'))]
	if b.Len() == 0 {
		return g.bashCall(cmd, "", 1) // rg finds nothing: exit status 1
	}
	return g.bashCall(cmd, b.String(), 0)
}

// testOutput is what the task's test command prints.
func (g *gen) testOutput(t *task, fail bool) string {
	ms := 10 + g.rng.IntN(900)
	if t.pkg == "" {
		if fail {
			return fmt.Sprintf(" ❯ src/PassTable.test.tsx (12 tests | 1 failed) %dms\n   × %s\n     → %s\n\n Test Files  1 failed (1)\n      Tests  1 failed | 11 passed (12)\n", ms, t.test, t.symptom)
		}
		return fmt.Sprintf(" ✓ src/PassTable.test.tsx (12 tests) %dms\n\n Test Files  1 passed (1)\n      Tests  12 passed (12)\n   Duration  1.%02ds\n", ms, g.rng.IntN(100))
	}
	dir := pkgDir(t)
	if fail {
		file := t.files[min(1, len(t.files)-1)]
		return fmt.Sprintf("--- FAIL: %s (0.%02ds)\n    %s:%d: %s\nFAIL\nFAIL\t%s/%s\t0.%03ds\nFAIL\n", t.test, g.rng.IntN(50), file[strings.LastIndexByte(file, '/')+1:], 20+g.rng.IntN(200), t.symptom, module, dir, ms)
	}
	if t.pkg != "./..." {
		return fmt.Sprintf("ok  \t%s/%s\t0.%03ds\n", module, dir, ms)
	}
	var b strings.Builder
	for _, d := range []string{"cmd/orbit", "internal/api", "internal/config", "internal/orbit", "internal/store", "internal/tle"} {
		if d == "cmd/orbit" {
			fmt.Fprintf(&b, "?   \t%s/%s\t[no test files]\n", module, d)
			continue
		}
		fmt.Fprintf(&b, "ok  \t%s/%s\t0.%03ds\n", module, d, 10+g.rng.IntN(900))
	}
	return b.String()
}

// pkgDir is the directory of the task's package.
func pkgDir(t *task) string {
	d := strings.Trim(strings.TrimPrefix(t.pkg, "./"), "/")
	if d == "..." || d == "" {
		d = t.files[0][:max(0, strings.LastIndexByte(t.files[0], '/'))]
	}
	return d
}

func (g *gen) gitStatus(t *task) string {
	var b strings.Builder
	for _, f := range t.files {
		b.WriteString(" M " + f + "\n")
	}
	return b.String()
}

func (g *gen) diffStat(t *task) string {
	var b strings.Builder
	ins, del := 0, 0
	for _, f := range t.files {
		a, d := 1+g.rng.IntN(30), g.rng.IntN(10)
		ins, del = ins+a, del+d
		fmt.Fprintf(&b, " %s | %d %s%s\n", f, a+d, strings.Repeat("+", min(a, 20)), strings.Repeat("-", min(d, 10)))
	}
	fmt.Fprintf(&b, " %d files changed, %d insertions(+), %d deletions(-)\n", len(t.files), ins, del)
	return b.String()
}

// hugeCall reads the TLE catalog or runs the verbose test suite: a result
// of 64–256 KiB (scaled).
func (g *gen) hugeCall() toolUse {
	n := int(float64(64<<10+g.rng.IntN(192<<10)) * g.o.SizeScale)
	if g.chance(0.5) {
		path := "internal/tle/testdata/catalog.txt"
		g.read[path] = true
		return g.use("read", readArgs{Path: path}, g.catalogText(n), false, readDone)
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		t := tasks[i%len(tasks)].test
		fmt.Fprintf(&b, "=== RUN   %s/case_%04d\n--- PASS: %s/case_%04d (0.00s)\n", t, i, t, i)
	}
	return g.bashCall("go test -v -count=1 ./...", b.String()+"PASS\nok  \t"+module+"/internal/orbit\t4.212s\n", 0)
}

// trailingHuge ends the session with an assistant message reading n
// windows of the TLE catalog, each larger than KeepRecentTokens.
func (g *gen) trailingHuge(n int) {
	m := g.newAssistant()
	m.Content = append(m.Content, llm.Text{Text: "I'll read the whole TLE catalog to find the malformed entry."})
	var uses []toolUse
	path := "internal/tle/testdata/catalog.txt"
	g.read[path] = true
	for i := range n {
		size := g.o.KeepRecentTokens*5 + g.rng.IntN(g.o.KeepRecentTokens+1)
		uses = append(uses, g.use("read", readArgs{Path: path, Offset: 1 + i*size/70, Limit: size / 70}, g.catalogText(size), false, readDone))
		m.Content = append(m.Content, uses[i].call)
	}
	g.finishAssistant(m)
	g.emitMessage(m)
	for _, u := range uses {
		g.tick(30)
		u.result.Timestamp = g.ms()
		g.emitMessage(u.result)
	}
}

// catalogText returns about n bytes of whole lines of a TLE catalog.
func (g *gen) catalogText(n int) string {
	if len(g.catalog) < n+4096 {
		var b strings.Builder
		b.WriteString(g.catalog)
		for i := len(g.catalog) / 165; b.Len() < 2*n+8192; i++ {
			name := satellites[i%len(satellites)]
			num := 25544 + i*7
			fmt.Fprintf(&b, "%-24s\n1 %05dU %02d%03dA   25%03d.%08d  .%08d  00000-0  %05d-3 0  9%03d\n2 %05d  %3d.%04d %3d.%04d %07d %3d.%04d %3d.%04d %2d.%08d%5d\n",
				name, num%100000, 98+i%20, i%400, 300+i%60, (i*7919)%100000000, (i*104729)%100000000, i%99999, i%1000,
				num%100000, i%180, i%10000, (i*3)%360, i%10000, (i*6703)%10000000, (i*7)%360, i%10000, (i*11)%360, i%10000, 15, (i*49815)%100000000, i%100000)
		}
		g.catalog = b.String()
	}
	start := g.rng.IntN(len(g.catalog) - n - 1)
	start += strings.IndexByte(g.catalog[start:], '\n') + 1
	end := start + n
	if i := strings.LastIndexByte(g.catalog[start:end], '\n'); i > 0 {
		end = start + i
	}
	return g.catalog[start:end]
}
