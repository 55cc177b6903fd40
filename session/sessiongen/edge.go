package sessiongen

import (
	"embed"
	"path"
	"slices"
	"strings"
)

// EdgeCase is a small hand-written session of a shape the generator does
// not make, or makes too rarely to be sure a test meets it: each holds pi
// 1.6's lines as pi writes them, or a corner pi and Prime once decided
// differently. Tests compare Prime with pi on every entry of each.
type EdgeCase struct {
	// Name is the file's name without ".jsonl".
	Name string
	// About says what the session is for.
	About string
	// Data is the session file.
	Data []byte
}

//go:embed edgecases/*.jsonl
var edgeFiles embed.FS

// edgeAbout describes every file of edgecases/.
var edgeAbout = map[string]string{
	"pi16-system-edits": "a system message with sections and tool declarations, a patch (a section changed and one removed, " +
		"array-index section names, a tool removed and one added), a retried error reply hidden by a context_edit, a tool " +
		"result and a user message whose content a context_edit replaces",
	"pi16-compaction-system": "two compactions carrying the replayed system state, a system patch inside the kept range " +
		"(left out of the context) and one after a compaction",
	"pi16-system-shapes": "system messages with a content array (an image block among the text), a null content, null " +
		"sections, repeated and array-index section names, an empty toolsAdded, a declaration with members Prime does not know",
	"pi16-system-untimed": "a system message without a timestamp and without tools, which pi's replay ignores",
	"pi16-retries": "failed attempts as pi 1.6's agent hides them: a retried error reply, a reply cut off by the output " +
		"limit with its failed tool results, and a last reply that overflowed (the recovery the cut treats specially)",
	"pi16-edits": "context edits of every kind of target: a user message, a custom_message, a bash execution (replaced: " +
		"no effect; hidden), a stored custom message, a tool result, a branch summary, one before a compaction's kept range",
	"pi16-hidden-compaction": "a context edit that hides the latest compaction, its summary and its system state",
	// Issue 8, one file for each of its five points (compaction/issue8_test.go
	// writes the same lines).
	"issue8-empty-paths": "empty paths in a compaction's and a branch summary's file lists (kept), and a tool call " +
		"on an empty path (ignored)",
	"issue8-lone-surrogate":       "tool-call arguments holding a lone surrogate, six characters as JSON.stringify writes it",
	"issue8-empty-branch-summary": "an empty branch summary, a message of the branch walk though invisible to a compaction",
	"issue8-older-compaction":     "an older compaction inside the latest one's kept range, which stops the cut's scan-back",
	"issue8-nested-calls":         "a script tool's result recording the calls it made (nestedCalls), whose files a compaction lists",
}

// EdgeCases returns the hand-written sessions, sorted by name.
func EdgeCases() []EdgeCase {
	entries, err := edgeFiles.ReadDir("edgecases")
	if err != nil {
		panic("sessiongen: " + err.Error()) // embedded at build time
	}
	var out []EdgeCase
	for _, e := range entries {
		data, err := edgeFiles.ReadFile(path.Join("edgecases", e.Name()))
		if err != nil {
			panic("sessiongen: " + err.Error())
		}
		name := strings.TrimSuffix(e.Name(), ".jsonl")
		out = append(out, EdgeCase{Name: name, About: edgeAbout[name], Data: data})
	}
	slices.SortFunc(out, func(a, b EdgeCase) int { return strings.Compare(a.Name, b.Name) })
	return out
}
