package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/session"
)

// transcriptCommands are the commands that print a conversation as the text
// Prime's summary requests hold.
func transcriptCommands() []*command {
	return []*command{{
		name:    "transcript",
		usage:   "[FILE | -] [--leaf ID | --from ID [--to ID]] [--model PROVIDER/ID] [--reasoning=true|false] [--tool-bodies N] [--json] [--cwd DIR]",
		summary: "print a conversation (a session's, or a JSON array of messages on stdin) as the text Prime's summary requests hold",
		run:     runTranscript,
	}}
}

// transcriptJSON is "prime transcript --json".
type transcriptJSON struct {
	// Transcript is the text; Tokens its chars/4 estimate, as Prime sizes
	// a summary request.
	Transcript string `json:"transcript"`
	Tokens     int    `json:"tokens"`
	// Messages counts the messages serialized, MessageTokens their
	// estimate as messages of a context.
	Messages      int `json:"messages"`
	MessageTokens int `json:"messageTokens"`
	// Reasoning and ToolBodies are the projection used; Model the model
	// whose family decided Reasoning ("provider/id"), null when none did.
	Reasoning  bool    `json:"reasoning"`
	ToolBodies int     `json:"toolBodies"`
	Model      *string `json:"model"`
	// File is the session file (null for stdin); EntryIDs are the entries
	// the messages came from, in order ([] for stdin).
	File     *string  `json:"file"`
	EntryIDs []string `json:"entryIds"`
}

func runTranscript(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("transcript", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object: the text, its token estimate and the projection used")
	leaf := fs.String("leaf", "", "the conversation the model sees at entry `ID` (default: the file's leaf)")
	from := fs.String("from", "", "instead, the entries from `ID` to --to, as stored (ID must be --to or an ancestor)")
	to := fs.String("to", "", "the last entry of --from's range, `ID` (default: the file's leaf)")
	model := fs.String("model", "", "project for the summarizer `PROVIDER/ID` (default: compaction.model, else the session's model)")
	reasoning := fs.Bool("reasoning", false, "keep (true) or omit (false) assistant reasoning, whatever the model (default: omitted for Claude-family models only)")
	bodies := fs.Int("tool-bodies", compaction.DefaultToolBodies, "how many of the newest tool results keep their body (`N`)")
	var sf settingsFlags
	sf.register(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErrorf("want one session FILE, or - for messages on stdin; got %d arguments", len(pos))
	}
	if *bodies < 0 {
		return usageErrorf("--tool-bodies must not be negative")
	}
	if *model != "" && set(fs, "reasoning") {
		return usageErrorf("--model and --reasoning exclude each other: the model only decides whether reasoning is kept")
	}
	if *leaf != "" && (*from != "" || *to != "") {
		return usageErrorf("--leaf and --from/--to exclude each other")
	}
	in := transcriptInput{leaf: *leaf, from: *from, to: *to}
	if len(pos) == 1 && pos[0] != "-" {
		in.file = pos[0]
	} else {
		if in.leaf != "" || in.from != "" || in.to != "" {
			return usageErrorf("--leaf, --from and --to choose entries of a session FILE; stdin holds messages")
		}
		if len(pos) == 0 && isTerminal(a.stdin) {
			return usageErrorf("want a session FILE, or a JSON array of messages on stdin (- reads it)")
		}
	}
	msgs, ids, sessionModel, err := in.read(a)
	if err != nil {
		return err
	}

	opts := compaction.TranscriptOptions{Reasoning: *reasoning, ToolBodies: *bodies}
	out := transcriptJSON{Messages: len(msgs), EntryIDs: ids, ToolBodies: *bodies}
	if in.file != "" {
		out.File = &in.file
	}
	if !set(fs, "reasoning") {
		st, err := loadSettings(ctx, a, sf)
		if err != nil {
			return err
		}
		warnProblems(a, "transcript", st)
		m, err := familyModel(a, st.AgentDir(), *model, st.SummaryModel(), sessionModel)
		if err != nil {
			return err
		}
		if m.ID != "" {
			ref := m.Provider + "/" + m.ID
			out.Model = &ref
		}
		opts.Reasoning = compaction.TranscriptOptionsFor(m).Reasoning
	}
	out.Reasoning = opts.Reasoning
	out.Transcript = compaction.Transcript(session.ToLLM(msgs), opts)
	out.Tokens = compaction.TranscriptTokens(out.Transcript)
	for _, m := range msgs {
		out.MessageTokens += session.EstimateTokens(m)
	}
	if *asJSON {
		return writeJSON(a.stdout, out)
	}
	if out.Transcript == "" {
		return nil
	}
	_, err = io.WriteString(a.stdout, out.Transcript+"\n")
	return err
}

// transcriptInput says where the messages come from: a session file's
// context at a leaf, or its entries from one id to another; or, without a
// file, a JSON array on stdin.
type transcriptInput struct {
	file, leaf, from, to string
}

// read returns the messages, the ids of the entries they came from ([] for
// stdin), and the session's model at the last of them (nil when unknown).
func (in transcriptInput) read(a *app) ([]session.Message, []string, *session.ModelRef, error) {
	if in.file == "" {
		data, err := io.ReadAll(a.stdin)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("stdin: %w", err)
		}
		msgs, err := decodeMessageArray(data)
		if err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("stdin: %w", err))
		}
		return msgs, []string{}, nil, nil
	}
	s, err := loadSession(a, in.file)
	if err != nil {
		return nil, nil, nil, err
	}
	printWarnings(a, s)
	entry := func(flag, id string) error {
		if s.Entry(id) == nil {
			return badInput(fmt.Errorf("%s: --%s: no entry with id %q", in.file, flag, id))
		}
		return nil
	}
	end := s.LeafID()
	for _, f := range []struct{ flag, id string }{{"leaf", in.leaf}, {"from", in.from}, {"to", in.to}} {
		if f.id == "" {
			continue
		}
		if err := entry(f.flag, f.id); err != nil {
			return nil, nil, nil, err
		}
		if f.flag != "from" {
			end = f.id
		}
	}
	if end == "" {
		return nil, []string{}, nil, nil // a session without entries
	}
	if in.from == "" && in.to == "" {
		c, err := s.Context(end)
		if err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("%s: %w", in.file, err))
		}
		ids := make([]string, len(c.Entries))
		for i, e := range c.Entries {
			ids[i] = e.ID
		}
		return c.Messages, ids, c.Model, nil
	}
	path := s.Path(end)
	start := 0
	if in.from != "" {
		start = -1
		for i, e := range path {
			if e.ID == in.from {
				start = i
			}
		}
		if start < 0 {
			return nil, nil, nil, badInput(fmt.Errorf("%s: --from %s is not on the path to %s: it must be that entry or one of its ancestors", in.file, in.from, end))
		}
	}
	var msgs []session.Message
	ids := []string{}
	for _, e := range path[start:] {
		m, err := session.ContextMessage(e)
		if err != nil {
			return nil, nil, nil, badInput(fmt.Errorf("%s: entry %s: %w", in.file, e.ID, err))
		}
		if m != nil {
			msgs, ids = append(msgs, m), append(ids, e.ID)
		}
	}
	c, err := session.BuildContext(path)
	if err != nil {
		return nil, nil, nil, badInput(fmt.Errorf("%s: %w", in.file, err))
	}
	return msgs, ids, c.Model, nil
}

// decodeMessageArray reads a JSON array of messages in the session file's
// format (the arrays of a session_before_compact event, say). A role Prime
// does not know is an error: its content would be left out silently.
func decodeMessageArray(data []byte) ([]session.Message, error) {
	dec := jsonwire.NewDecoder(data)
	if dec.PeekKind() != '[' {
		return nil, errors.New("want a JSON array of messages (role, content, …), as a session file stores them")
	}
	var raws []jsontext.Value
	if _, err := dec.ReadToken(); err != nil {
		return nil, jsonwire.Located(data, err)
	}
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, jsonwire.Located(data, err)
		}
		raws = append(raws, v.Clone())
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, jsonwire.Located(data, err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("want one JSON array; more follows it")
	}
	msgs := make([]session.Message, 0, len(raws))
	for i, raw := range raws {
		m, err := session.DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if u, ok := m.(*session.UnknownMessage); ok {
			return nil, fmt.Errorf("message %d: Prime does not know the role %q", i, u.Role())
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// familyModel returns the summarizer whose family decides whether reasoning
// is kept: the one asked for, else compaction.model, else the session's
// model; the zero model when none is known. A model asked for must be in
// the registry (prime models); the others, when it does not know them, are
// judged by their provider and id alone.
func familyModel(a *app, agentDir, asked, configured string, sessionModel *session.ModelRef) (llm.Model, error) {
	ref := configured
	if ref == "" && sessionModel != nil && sessionModel.Provider != "" && sessionModel.ModelID != "" {
		ref = sessionModel.Provider + "/" + sessionModel.ModelID
	}
	if asked != "" {
		ref = asked
	}
	if ref == "" {
		return llm.Model{}, nil
	}
	reg, err := registry.Load(registry.Options{AgentDir: agentDir, Getenv: a.getenv})
	if err != nil {
		return llm.Model{}, badInput(err)
	}
	e, err := reg.Find(ref)
	switch {
	case err == nil:
		return e.Model, nil
	case asked != "":
		return llm.Model{}, badInput(fmt.Errorf("--model: %w", err))
	}
	provider, id, ok := strings.Cut(ref, "/")
	if !ok {
		provider, id = "", ref
	}
	return llm.Model{Provider: provider, ID: id}, nil
}
