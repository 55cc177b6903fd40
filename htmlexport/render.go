package htmlexport

import (
	"fmt"
	"html"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// Bounds of what one block shows: a tool's output or arguments past them
// are cut, with a note of what was left out.
const (
	maxOutputLines = 400
	maxOutputBytes = 32 << 10
	// treeTextRunes is the length of a tree row's text.
	treeTextRunes = 80
)

// renderer makes each entry's conversation block and tree row.
type renderer struct {
	d *document
	// labels are the entries' labels, pinned the entries whose text a
	// pin holds, hidden the entries a context edit hides (all ids).
	labels map[string]string
	pinned map[string]bool
	hidden map[string]bool
}

// scan reads what marks other entries: labels (the last label entry for a
// target wins), pins and hiding edits.
func (r *renderer) scan() {
	for _, e := range r.d.entries {
		switch e.Type {
		case session.TypeLabel, session.TypeCustom, session.TypeContextEdit:
		default:
			continue
		}
		p, err := e.Payload()
		if err != nil {
			continue
		}
		switch p := p.(type) {
		case *session.LabelEntry:
			r.labels[p.TargetID] = p.Label
		case *session.CustomEntry:
			if p.CustomType == compaction.CustomTypePin {
				var pin struct {
					MessageID string `json:"messageId"`
				}
				if json.Unmarshal(p.Data, &pin) == nil && pin.MessageID != "" {
					r.pinned[pin.MessageID] = true
				}
			}
		case *session.ContextEditEntry:
			if p.Replacement == nil {
				r.hidden[p.TargetID] = true
			}
		}
	}
}

// entry renders the entry at row.
func (r *renderer) entry(row int32, e *session.Entry) error {
	d := r.d
	kind, block, tree := kindOf(e.Type), "", ""
	switch e.Type {
	case session.TypeMessage:
		m, err := e.Message()
		if err != nil {
			return err
		}
		kind, block, tree = r.message(row, m)
	default:
		var err error
		if block, tree, err = r.other(row, e); err != nil {
			return err
		}
	}
	if block != "" && kind != "r" {
		block = `<div class="blk k-` + kind + `" data-row="` + fmt.Sprint(row) + `">` + r.head(e, kind) + block + "</div>"
	} else if block == "" {
		kind = ""
	}
	d.data.Kind[row], d.data.HTML[row] = kind, block
	if l := r.labels[e.ID]; l != "" {
		d.data.Flags[row] |= flagLabel
		tree += ` <span class="lbl">` + html.EscapeString(r.d.red.text(l)) + `</span>`
	}
	if r.pinned[e.ID] {
		d.data.Flags[row] |= flagPin
	}
	if r.hidden[e.ID] {
		d.data.Flags[row] |= flagHiddenAt
	}
	d.data.Tree[row] = tree
	return nil
}

// unreadable shows an entry that cannot be decoded as what it is: an
// error in its place, the rest of the page unharmed.
func (r *renderer) unreadable(row int32, e *session.Entry, err error) {
	msg := html.EscapeString(r.d.red.text(fmt.Sprintf("entry %s (line %d) cannot be read: %v", e.ID, e.Line, err)))
	r.d.data.Kind[row] = "n"
	r.d.data.HTML[row] = `<div class="blk k-n" data-row="` + fmt.Sprint(row) + `"><div class="err">` + msg + `</div></div>`
	r.d.data.Tree[row] = `<span class="err">✗</span> unreadable ` + html.EscapeString(e.Type)
	delete(r.d.data.Calls, row)
}

// head is a block's first line: who and when.
func (r *renderer) head(e *session.Entry, kind string) string {
	who := ""
	switch kind {
	case "u":
		who = "You"
	case "a":
		who = "Assistant"
	case "r":
		who = "Tool"
	case "b":
		who = "Shell"
	case "c":
		who = "Compaction"
	case "s":
		who = "Branch summary"
	case "m":
		who = "Extension"
	case "y":
		who = "System prompt"
	}
	var b strings.Builder
	b.WriteString(`<div class="hd"><span class="who">` + who + `</span>`)
	if l := r.labels[e.ID]; l != "" {
		b.WriteString(` <span class="lbl">` + html.EscapeString(r.d.red.text(l)) + `</span>`)
	}
	if r.pinned[e.ID] {
		b.WriteString(` <span class="pin" title="pinned">pinned</span>`)
	}
	if r.hidden[e.ID] {
		b.WriteString(` <span class="hid" title="a context edit hides it from the model">hidden from the model</span>`)
	}
	b.WriteString(`<a class="ts" href="#e-` + html.EscapeString(e.ID) + `">` + html.EscapeString(clock(e.Timestamp)) + `</a></div>`)
	return b.String()
}

// message renders a message entry.
func (r *renderer) message(row int32, m session.Message) (kind, block, tree string) {
	switch m := m.(type) {
	case *llm.UserMessage:
		return "u", r.content(m.Content), "› " + r.short(firstText(m.Content))
	case *llm.AssistantMessage:
		return "a", r.reply(m), r.replyRow(m)
	case *llm.ToolResultMessage:
		r.d.data.Calls[row] = m.ToolCallID
		mark := ""
		if m.IsError {
			mark = ` <span class="err">✗</span>`
		}
		return "r", r.result(m), "↳ " + html.EscapeString(m.ToolName) + mark
	case *session.BashExecution:
		return "b", r.bash(m), "$ " + r.short(m.Command)
	case *session.CustomMessage:
		if !m.Display {
			return "", "", html.EscapeString(m.CustomType) + " (hidden)"
		}
		return "m", `<div class="ctype">` + html.EscapeString(m.CustomType) + `</div>` + r.content(m.Content), html.EscapeString(m.CustomType) + ": " + r.short(firstText(m.Content))
	case *session.SystemMessage:
		return "y", r.system(m), "system prompt"
	case *session.BranchSummaryMessage, *session.CompactionSummaryMessage:
		return "", "", m.Role()
	}
	return "", "", html.EscapeString(m.Role())
}

// content renders user or extension content: text as markdown, images.
func (r *renderer) content(content []llm.Content) string {
	var b strings.Builder
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			b.WriteString(`<div class="md">` + r.d.md.render(r.d.red.text(c.Text)) + `</div>`)
		case llm.Image:
			b.WriteString(image(c))
		}
	}
	return b.String()
}

// image is an image inline, as data.
func image(c llm.Image) string {
	mime := c.MIMEType
	if !strings.HasPrefix(mime, "image/") || strings.ContainsAny(mime, `"<> `) {
		mime = "image/png"
	}
	return `<img class="img" alt="image" src="data:` + mime + `;base64,` + html.EscapeString(c.Data) + `">`
}

// reply renders an assistant message: thinking folded, text, tool calls
// with a place for each result.
func (r *renderer) reply(m *llm.AssistantMessage) string {
	var b strings.Builder
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.Thinking:
			if c.Redacted || strings.TrimSpace(c.Thinking) == "" {
				continue
			}
			b.WriteString(`<details class="think"><summary>thinking</summary><div class="md">` + r.d.md.render(r.d.red.text(c.Thinking)) + `</div></details>`)
		case llm.Text:
			b.WriteString(`<div class="md">` + r.d.md.render(r.d.red.text(c.Text)) + `</div>`)
		case llm.ToolCall:
			b.WriteString(r.call(c))
		}
	}
	if m.StopReason == llm.StopReasonError || m.StopReason == llm.StopReasonAborted {
		msg := m.ErrorMessage
		if msg == "" {
			msg = string(m.StopReason)
		}
		b.WriteString(`<div class="err">` + html.EscapeString(r.d.red.text(msg)) + `</div>`)
	}
	var meta []string
	if m.Model != "" {
		meta = append(meta, html.EscapeString(m.Provider+"/"+m.Model))
	}
	if u, ok := session.ValidUsage(m); ok {
		meta = append(meta, "context "+commas(u.ContextTokens())+" tokens")
	}
	if len(meta) > 0 {
		b.WriteString(`<div class="usage">` + strings.Join(meta, " · ") + `</div>`)
	}
	return b.String()
}

// replyRow is a reply's tree row: its text, or the tools it called.
func (r *renderer) replyRow(m *llm.AssistantMessage) string {
	var tools []string
	text := ""
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.Text:
			if text == "" {
				text = c.Text
			}
		case llm.ToolCall:
			tools = append(tools, c.Name)
		}
	}
	switch {
	case m.StopReason == llm.StopReasonError || m.StopReason == llm.StopReasonAborted:
		return `<span class="err">✗</span> ` + html.EscapeString(string(m.StopReason))
	case strings.TrimSpace(text) != "":
		return r.short(text)
	case len(tools) > 0:
		return "→ " + html.EscapeString(strings.Join(tools, ", "))
	}
	return "(thinking)"
}

// call renders a tool call: a folded block whose summary names the tool
// and its main argument; the result is put in its place by the page.
func (r *renderer) call(c llm.ToolCall) string {
	arg := func(name string) string {
		s, _ := c.Arguments.StringArg(name)
		return r.d.red.text(s)
	}
	var sum, body string
	switch c.Name {
	case "bash":
		sum = arg("command")
		body = `<pre class="code"><code>` + highlight(bounded(arg("command")), "sh") + `</code></pre>`
	case "read", "ls", "find", "grep", "write":
		sum = arg("path")
		if p := arg("pattern"); p != "" {
			sum = p + "  " + sum
		}
		if c.Name == "write" {
			body = `<pre class="code"><code>` + html.EscapeString(bounded(arg("content"))) + `</code></pre>`
		}
	case "edit":
		sum = arg("path")
		body = `<pre class="code"><code>` + highlightDiff(bounded(diffOf(arg("oldText"), arg("newText")))) + `</code></pre>`
	}
	if body == "" {
		body = `<pre class="args">` + html.EscapeString(bounded(r.d.red.text(prettyJSON(c.Arguments.Value())))) + `</pre>`
	}
	first, _, _ := strings.Cut(strings.TrimSpace(sum), "\n")
	return `<details class="tool" data-call="` + html.EscapeString(c.ID) + `"><summary><span class="tn">` + html.EscapeString(c.Name) + `</span> <code>` +
		html.EscapeString(cut(first, 120)) + `</code><span class="st"></span></summary><div class="tb">` + body + `<div class="out"></div></div></details>`
}

// result renders a tool result, for its call's place.
func (r *renderer) result(m *llm.ToolResultMessage) string {
	var b strings.Builder
	class := "res"
	if m.IsError {
		class += " bad"
	}
	b.WriteString(`<div class="` + class + `">`)
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.Text:
			b.WriteString(`<pre>` + html.EscapeString(bounded(r.d.red.text(c.Text))) + `</pre>`)
		case llm.Image:
			b.WriteString(image(c))
		}
	}
	b.WriteString(`</div>`)
	return b.String()
}

// bash renders a shell command the user ran.
func (r *renderer) bash(m *session.BashExecution) string {
	out := `<pre class="code"><code>$ ` + highlight(r.d.red.text(m.Command), "sh") + `</code></pre><pre>` + html.EscapeString(bounded(r.d.red.text(m.Output))) + `</pre>`
	if m.ExitCode != nil && *m.ExitCode != 0 {
		out += fmt.Sprintf(`<div class="err">exit status %d</div>`, *m.ExitCode)
	}
	if m.ExcludeFromContext {
		out += `<div class="usage">not sent to the model</div>`
	}
	return out
}

// system renders a system prompt (or a patch of it), folded.
func (r *renderer) system(m *session.SystemMessage) string {
	var b strings.Builder
	b.WriteString(`<details class="sys"><summary>`)
	fmt.Fprintf(&b, "%d sections, %d tools", len(m.Sections), len(m.ToolsAdded))
	b.WriteString(`</summary>`)
	if m.Content != "" {
		b.WriteString(`<pre>` + html.EscapeString(bounded(r.d.red.text(m.Content))) + `</pre>`)
	}
	for _, s := range m.Sections {
		if s.Removed {
			b.WriteString(`<div class="usage">section ` + html.EscapeString(s.Name) + ` removed</div>`)
			continue
		}
		b.WriteString(`<h4>` + html.EscapeString(s.Name) + `</h4><pre>` + html.EscapeString(bounded(r.d.red.text(s.Text))) + `</pre>`)
	}
	if len(m.ToolsAdded) > 0 {
		var names []string
		for _, t := range m.ToolsAdded {
			names = append(names, t.Name)
		}
		b.WriteString(`<div class="usage">tools: ` + html.EscapeString(strings.Join(names, ", ")) + `</div>`)
	}
	b.WriteString(`</details>`)
	return b.String()
}

// short is a tree row's text: the first line, cut, escaped.
func (r *renderer) short(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, "\n")
	return html.EscapeString(cut(r.d.red.text(s), treeTextRunes))
}

func firstText(content []llm.Content) string {
	for _, c := range content {
		if t, ok := c.(llm.Text); ok && strings.TrimSpace(t.Text) != "" {
			return t.Text
		}
	}
	for _, c := range content {
		if _, ok := c.(llm.Image); ok {
			return "[image]"
		}
	}
	return ""
}

// bounded cuts s to maxOutputLines lines and maxOutputBytes bytes, noting
// what it left out.
func bounded(s string) string {
	total := strings.Count(s, "\n") + 1
	cutAt := len(s)
	if n := nthLine(s, maxOutputLines); n < cutAt {
		cutAt = n
	}
	if cutAt > maxOutputBytes {
		cutAt = maxOutputBytes
		for cutAt > 0 && s[cutAt]&0xC0 == 0x80 {
			cutAt--
		}
	}
	if cutAt >= len(s) {
		return s
	}
	shown := strings.Count(s[:cutAt], "\n")
	return s[:cutAt] + fmt.Sprintf("\n… %s more lines (%s bytes) not in the export", commas(total-shown), commas(len(s)-cutAt))
}

// nthLine returns the offset of the end of s's n-th line (len(s) when it
// has fewer).
func nthLine(s string, n int) int {
	off := 0
	for range n {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}

// cut shortens s to n runes, with an ellipsis.
func cut(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// diffOf shows an edit as removed and added lines.
func diffOf(old, new string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(old, "\n") {
		b.WriteString("-" + l + "\n")
	}
	for l := range strings.SplitSeq(new, "\n") {
		b.WriteString("+" + l + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// prettyJSON indents a JSON value (the value itself when it is not JSON).
func prettyJSON(v jsontext.Value) string {
	c := v.Clone()
	if err := c.Indent(jsontext.WithIndent("  ")); err != nil {
		return string(v)
	}
	return string(c)
}
