package htmlexport

import (
	"fmt"
	"html"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/session"
)

// other renders an entry that is not a message.
func (r *renderer) other(row int32, e *session.Entry) (block, tree string, err error) {
	p, err := e.Payload()
	if err != nil {
		return "", "", err
	}
	switch p := p.(type) {
	case *session.CompactionEntry:
		r.d.data.Flags[row] |= flagCompact
		info := r.d.compaction(row, p.FirstKeptEntryID)
		r.d.data.Comp[row] = info
		return r.compactionBlock(e, p, info), fmt.Sprintf("⟲ compaction #%d · %s tokens", info.Num, commas(p.TokensBefore)), nil
	case *session.BranchSummaryEntry:
		r.d.data.Flags[row] |= flagSummary
		if strings.TrimSpace(p.Summary) == "" {
			return "", "⑂ branch (no summary)", nil
		}
		from := `<div class="usage">summary of the branch left at <a href="#e-` + html.EscapeString(p.FromID) + `">` + html.EscapeString(p.FromID) + `</a></div>`
		return from + `<div class="md">` + r.d.md.render(r.d.red.text(p.Summary)) + `</div>`, "⑂ branch summary", nil
	case *session.CustomMessageEntry:
		_, block, tree := r.message(row, &session.CustomMessage{CustomType: p.CustomType, Content: p.Content, Display: p.Display})
		return block, tree, nil
	case *session.ModelChangeEntry:
		t := "model " + html.EscapeString(p.Provider+"/"+p.ModelID)
		return `<div class="note">` + t + `</div>`, t, nil
	case *session.ThinkingLevelChangeEntry:
		t := "thinking " + html.EscapeString(string(p.ThinkingLevel))
		return `<div class="note">` + t + `</div>`, t, nil
	case *session.ContextEditEntry:
		what := "replaces the content of"
		if p.Replacement == nil {
			what = "hides"
		}
		link := `<a href="#e-` + html.EscapeString(p.TargetID) + `">` + html.EscapeString(p.TargetID) + `</a>`
		return `<div class="note">context edit: ` + what + ` ` + link + ` for the model</div>`, "edit: " + what + " " + html.EscapeString(p.TargetID), nil
	case *session.LabelEntry:
		if p.Label == "" {
			return "", "label cleared on " + html.EscapeString(p.TargetID), nil
		}
		return "", "label " + html.EscapeString(r.d.red.text(p.Label)) + " on " + html.EscapeString(p.TargetID), nil
	case *session.SessionInfoEntry:
		return "", "name: " + r.short(p.Name), nil
	case *session.CustomEntry:
		return r.custom(row, p)
	}
	return "", html.EscapeString(e.Type), nil
}

// custom renders extension state: only pins are shown.
func (r *renderer) custom(row int32, p *session.CustomEntry) (block, tree string, err error) {
	switch p.CustomType {
	case compaction.CustomTypePin:
		var pin struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(p.Data, &pin) != nil {
			return "", "pin", nil
		}
		r.d.data.Flags[row] |= flagPin
		return `<div class="note pin-note">pinned: ` + html.EscapeString(r.d.red.text(pin.Text)) + `</div>`, "pin: " + r.short(pin.Text), nil
	case compaction.CustomTypeUnpin:
		return `<div class="note">unpinned</div>`, "unpin", nil
	}
	return "", html.EscapeString(p.CustomType), nil
}

// compactionBlock renders a compaction: its receipt, instructions, the
// link to what it replaced and its summary.
func (r *renderer) compactionBlock(e *session.Entry, c *session.CompactionEntry, info compInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="cnum">#%d</div><table class="receipt">`, info.Num)
	row := func(k, v string) { b.WriteString(`<tr><th>` + k + `</th><td>` + v + `</td></tr>`) }
	d, detailed := compaction.ParseDetails(c.Details)
	rc := d.Receipt
	if rc != nil {
		row("tokens", commas(c.TokensBefore)+" → "+commas(rc.TokensAfter))
		row("messages summarized", commas(rc.Messages))
		reason := html.EscapeString(rc.Reason)
		if rc.Background {
			reason += " (written in the background"
			if rc.WaitMs > 0 {
				reason += fmt.Sprintf(", waited %s ms", commas(int(rc.WaitMs)))
			}
			reason += ")"
		}
		row("reason", reason)
	} else {
		row("tokens before", commas(c.TokensBefore))
	}
	switch {
	case c.FromHook:
		row("summary by", "a hook")
	case detailed && d.Summarizer == compaction.SummarizerDeterministic:
		row("summary by", "code ("+html.EscapeString(d.DeterministicReason)+")")
	case rc != nil && rc.Model != "":
		row("model", html.EscapeString(rc.Model))
	}
	if rc != nil && rc.DurationMs > 0 {
		row("took", fmt.Sprintf("%.1f s", float64(rc.DurationMs)/1000))
	}
	row("at", html.EscapeString(shortTime(e.Timestamp)))
	if l := d.LedgerCheck; l != nil {
		row("ledger kept", fmt.Sprintf("%d of %d items, %d written back, %d without room", l.Kept, l.Checked, len(l.Repaired), len(l.Unfit)))
	}
	if len(d.ModifiedFiles) > 0 {
		row("files changed", html.EscapeString(r.d.red.text(strings.Join(d.ModifiedFiles, ", "))))
	}
	b.WriteString(`</table>`)
	if c.CustomInstructions != "" {
		b.WriteString(`<div class="instr"><b>Instructions:</b> ` + html.EscapeString(r.d.red.text(c.CustomInstructions)) + `</div>`)
	}
	if info.From >= 0 {
		fmt.Fprintf(&b, `<div class="replaced"><a href="#" data-jump="%d" data-until="%d">the %s entries it replaced</a> (kept from <a href="#" data-jump="%d">%s</a> on)</div>`,
			info.From, info.Kept, commas(info.Count), info.Kept, html.EscapeString(c.FirstKeptEntryID))
	}
	b.WriteString(`<details class="summary" open><summary>summary</summary><div class="md">` + r.d.md.render(r.d.red.text(c.Summary)) + `</div></details>`)
	return b.String()
}
