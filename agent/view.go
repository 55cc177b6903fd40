package agent

import (
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// This file holds the transcript read model: what a front end draws of the
// current path. Like every read model of the agent it is a snapshot, made
// under the agent's lock, that the caller may keep and read from any
// goroutine while the agent works on.

// TranscriptKind says what a transcript item shows.
type TranscriptKind int

// The kinds of transcript items.
const (
	TranscriptUser          TranscriptKind = iota + 1 // Message is an *llm.UserMessage
	TranscriptAssistant                               // Message is an *llm.AssistantMessage
	TranscriptToolResult                              // Message is an *llm.ToolResultMessage
	TranscriptBash                                    // Bash is the user's ! command
	TranscriptCustom                                  // CustomType and Content: a displayed custom message
	TranscriptCompaction                              // Compaction: the [compaction] block
	TranscriptBranchSummary                           // Summary: the [branch] block
)

// TranscriptItem is one entry of the transcript, in drawing order.
type TranscriptItem struct {
	Kind    TranscriptKind
	EntryID string
	// Message is the entry's message, as written (a context edit that
	// replaces content changes what the model sees, not the transcript).
	// Messages are shared with the session's decoded entries: a front end
	// reads them and never modifies them.
	Message llm.Message
	Bash    *BashExecution
	// CustomType and Content are a displayed custom message's.
	CustomType string
	Content    []llm.Content
	Compaction *CompactionBlock
	// Summary is a branch summary's text.
	Summary string
}

// CompactionBlock is what the transcript shows of a compaction.
type CompactionBlock struct {
	TokensBefore int
	Instructions string
	Summary      string
	// Receipt is nil when the entry has none or it cannot be read.
	Receipt *Receipt
}

// Transcript is the conversation to draw for the current path.
type Transcript struct {
	// Items are the entries the model's context is built from, in order:
	// after a compaction, its block first, then the messages it kept, then
	// what followed. Entries a context edit hides, system messages and
	// bookkeeping entries are left out.
	Items []TranscriptItem
	// Compactions counts the compactions on the path, older ones included.
	Compactions int
}

// Transcript returns the transcript of the current path. Which entries it
// holds is decided by the session's context (the projection the model is
// sent), so a front end shows exactly the conversation the model sees.
func (a *Agent) Transcript() Transcript {
	a.mu.Lock()
	defer a.mu.Unlock()
	return transcriptOf(a.s)
}

// transcriptOf is the transcript of s's current path.
func transcriptOf(s *session.Session) Transcript {
	var t Transcript
	path := s.LeafPath()
	for _, e := range path {
		if e.Type == session.TypeCompaction {
			t.Compactions++
		}
	}
	ctx, err := session.BuildContext(path)
	if err != nil {
		// An entry the context cannot be built from: the path is shown
		// as it is, whatever the model would see.
		for _, e := range path {
			t.add(e)
		}
		return t
	}
	first := true
	for e, msgs := range ctx.Projection() {
		switch {
		case e.Type == session.TypeCompaction && !first:
			// An older compaction in the kept range: the latest one
			// folds it in.
		case len(msgs) == 0 && hiddenByEdit(e):
		default:
			t.add(e)
		}
		first = false
	}
	return t
}

// hiddenByEdit reports whether e, which gave the context no message, would
// have given one: then a context edit hid it.
func hiddenByEdit(e *session.Entry) bool {
	m, err := session.ContextMessage(e)
	return err == nil && m != nil
}

// add appends the item of e, when it shows one.
func (t *Transcript) add(e *session.Entry) {
	if e.Type == session.TypeMessage {
		if it, ok := messageItem(e); ok {
			t.Items = append(t.Items, it)
		}
		return
	}
	p, err := e.Payload()
	if err != nil {
		return
	}
	it := TranscriptItem{EntryID: e.ID}
	switch p := p.(type) {
	case *session.CompactionEntry:
		// A receipt that cannot be read leaves the block as pi shows it.
		r, _ := ReceiptOf(e)
		it.Kind = TranscriptCompaction
		it.Compaction = &CompactionBlock{TokensBefore: p.TokensBefore, Instructions: p.CustomInstructions, Summary: p.Summary, Receipt: r}
	case *session.BranchSummaryEntry:
		it.Kind, it.Summary = TranscriptBranchSummary, p.Summary
	case *session.CustomMessageEntry:
		if !p.Display {
			return
		}
		it.Kind, it.CustomType, it.Content = TranscriptCustom, p.CustomType, p.Content
	default:
		return
	}
	t.Items = append(t.Items, it)
}

// messageItem is the item of a message entry; system messages and
// undecodable entries show none.
func messageItem(e *session.Entry) (TranscriptItem, bool) {
	msg, err := e.Message()
	if err != nil {
		return TranscriptItem{}, false
	}
	it := TranscriptItem{EntryID: e.ID}
	switch m := msg.(type) {
	case *llm.UserMessage:
		it.Kind, it.Message = TranscriptUser, m
	case *llm.AssistantMessage:
		it.Kind, it.Message = TranscriptAssistant, m
	case *llm.ToolResultMessage:
		it.Kind, it.Message = TranscriptToolResult, m
	case *session.BashExecution:
		it.Kind, it.Bash = TranscriptBash, m
	case *session.CustomMessage:
		if !m.Display {
			return TranscriptItem{}, false
		}
		it.Kind, it.CustomType, it.Content = TranscriptCustom, m.CustomType, m.Content
	default:
		return TranscriptItem{}, false
	}
	return it, true
}
