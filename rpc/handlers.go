package rpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/agentjson"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// handler runs one command and returns its response's data (nil for none),
// or the error its failure response states, or errAnswered.
type handler func(s *Server, ctx context.Context, c *command) ([]byte, error)

// lookup returns the handler of a command type: every command of pi's
// protocol, and Prime's additions (navigate_tree, pin, unpin, get_pins,
// uncompact, get_compaction_receipt, mcp).
func lookup(typ string) (handler, bool) {
	var h handler
	switch typ {
	case "prompt":
		h = (*Server).prompt
	case "extension_ui_response":
		h = (*Server).uiResponse
	case "steer":
		h = (*Server).steer
	case "follow_up":
		h = (*Server).followUp
	case "abort":
		h = (*Server).abort
	case "clear_queue":
		h = (*Server).clearQueue
	case "new_session":
		h = (*Server).newSession
	case "get_state":
		h = (*Server).getState
	case "get_messages":
		h = (*Server).getMessages
	case "set_model":
		h = (*Server).setModel
	case "cycle_model":
		h = (*Server).cycleModel
	case "get_available_models":
		h = (*Server).availableModels
	case "set_thinking_level":
		h = (*Server).setThinkingLevel
	case "cycle_thinking_level":
		h = (*Server).cycleThinkingLevel
	case "get_available_thinking_levels":
		h = (*Server).availableThinkingLevels
	case "set_steering_mode":
		h = (*Server).setSteeringMode
	case "set_follow_up_mode":
		h = (*Server).setFollowUpMode
	case "compact":
		h = (*Server).compact
	case "set_auto_compaction":
		h = (*Server).setAutoCompaction
	case "set_auto_retry":
		h = (*Server).setAutoRetry
	case "abort_retry":
		h = (*Server).abortRetry
	case "bash":
		h = (*Server).bash
	case "abort_bash":
		h = (*Server).abortBash
	case "get_session_stats":
		h = (*Server).sessionStats
	case "export_html":
		h = (*Server).exportHTML
	case "switch_session":
		h = (*Server).switchSession
	case "fork":
		h = (*Server).fork
	case "clone":
		h = (*Server).clone
	case "get_fork_messages":
		h = (*Server).forkMessages
	case "get_entries":
		h = (*Server).entries
	case "get_tree":
		h = (*Server).tree
	case "get_last_assistant_text":
		h = (*Server).lastAssistantText
	case "set_session_name":
		h = (*Server).setSessionName
	case "get_commands":
		h = (*Server).commands
	case "navigate_tree":
		h = (*Server).navigateTree
	case "pin":
		h = (*Server).pin
	case "unpin":
		h = (*Server).unpin
	case "get_pins":
		h = (*Server).getPins
	case "uncompact":
		h = (*Server).uncompact
	case "get_compaction_receipt":
		h = (*Server).compactionReceipt
	case "mcp":
		h = (*Server).mcp
	}
	return h, h != nil
}

// errorText words an error of the agent for a failure response.
func errorText(err error) string {
	if errors.Is(err, agent.ErrBusy) {
		return `the agent is busy with a prompt: send the message with "streamingBehavior": "steer" or "followUp", or abort first`
	}
	return err.Error()
}

// Answers that say nothing was cancelled (Prime has no hook that cancels a
// session switch) and that there is nothing to say.
const (
	notCancelled = `{"cancelled":false}`
	null         = `null`
)

func dispositionData(d agent.Disposition) []byte {
	return quoteObject("disposition", string(d))
}

// quoteObject is {name: value}.
func quoteObject(name, value string) []byte {
	b := append(quote([]byte{'{'}, name), ':')
	return append(quote(b, value), '}')
}

// prompt sends a message, or queues it when the agent is busy and the
// client says how (streamingBehavior).
func (s *Server) prompt(ctx context.Context, c *command) ([]byte, error) {
	behavior := c.oneOf("streamingBehavior", false, string(agent.Steer), string(agent.FollowUp))
	return s.send(ctx, c, agent.Behavior(behavior))
}

// steer and followUp queue a message while the agent is busy; while it is
// idle the message is a prompt.
func (s *Server) steer(ctx context.Context, c *command) ([]byte, error) {
	return s.send(ctx, c, agent.Steer)
}

func (s *Server) followUp(ctx context.Context, c *command) ([]byte, error) {
	return s.send(ctx, c, agent.FollowUp)
}

// send is prompt, steer and follow_up. The response is written the moment
// the agent accepts the message, before any event of the run it starts.
func (s *Server) send(ctx context.Context, c *command, b agent.Behavior) ([]byte, error) {
	text := c.str("message")
	images := c.images()
	if c.err != nil {
		return nil, c.err
	}
	answered := false
	d, err := s.ag.Prompt(ctx, text, agent.PromptOptions{
		Images: images, Behavior: b,
		Accepted: func(d agent.Disposition) {
			answered = true
			s.respond(c, dispositionData(d))
		},
	})
	switch {
	case answered:
		return nil, errAnswered
	case err != nil:
		return nil, err
	}
	return dispositionData(d), nil
}

// abort stops the agent and answers once it is idle and the compaction or
// navigation it stopped has answered.
func (s *Server) abort(ctx context.Context, c *command) ([]byte, error) {
	s.ag.Abort()
	s.ops.Wait()
	return nil, nil
}

func (s *Server) clearQueue(ctx context.Context, c *command) ([]byte, error) {
	steering, followUp := s.ag.ClearQueue()
	return encode(func(w *jsonwire.ObjectWriter) {
		w.Value("steering", orEmpty(steering))
		w.Value("followUp", orEmpty(followUp))
	})
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) newSession(ctx context.Context, c *command) ([]byte, error) {
	parent, _ := c.optStr("parentSession")
	if c.err != nil {
		return nil, c.err
	}
	if err := s.ag.NewSessionFrom(parent); err != nil {
		return nil, err
	}
	return []byte(notCancelled), nil
}

func (s *Server) getState(ctx context.Context, c *command) ([]byte, error) {
	return stateData(s.ag.State())
}

func (s *Server) getMessages(ctx context.Context, c *command) ([]byte, error) {
	msgs, err := s.ag.Messages()
	if err != nil {
		return nil, err
	}
	if msgs == nil {
		msgs = []agent.Message{}
	}
	return encode(func(w *jsonwire.ObjectWriter) { w.Value("messages", msgs) })
}

func (s *Server) setModel(ctx context.Context, c *command) ([]byte, error) {
	provider, id := c.str("provider"), c.str("modelId")
	if c.err != nil {
		return nil, c.err
	}
	models, err := s.ag.Models()
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(models, func(e agent.ModelEntry) bool { return e.Model.Provider == provider && e.Model.ID == id }) {
		return nil, fmt.Errorf("Model not found: %s/%s (get_available_models lists the models with a key)", provider, id)
	}
	m, err := s.ag.SetModel(ctx, provider+"/"+id)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wireModel(m), marshalOptions)
}

func (s *Server) cycleModel(ctx context.Context, c *command) ([]byte, error) {
	m, ok, err := s.ag.CycleModel(ctx, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []byte(null), nil
	}
	return encode(func(w *jsonwire.ObjectWriter) {
		w.Value("model", wireModel(m))
		w.Str("thinkingLevel", string(s.ag.ThinkingLevel()))
		w.Bool("isScoped", false)
	})
}

func (s *Server) availableModels(ctx context.Context, c *command) ([]byte, error) {
	entries, err := s.ag.Models()
	if err != nil {
		return nil, err
	}
	models := make([]llm.Model, len(entries))
	for i, e := range entries {
		models[i] = wireModel(e.Model)
	}
	return encode(func(w *jsonwire.ObjectWriter) { w.Value("models", models) })
}

func (s *Server) setThinkingLevel(ctx context.Context, c *command) ([]byte, error) {
	names := make([]string, len(agent.ThinkingLevels))
	for i, l := range agent.ThinkingLevels {
		names[i] = string(l)
	}
	level := c.oneOf("level", true, names...)
	if c.err != nil {
		return nil, c.err
	}
	_, err := s.ag.SetThinkingLevel(ctx, llm.ThinkingLevel(level))
	return nil, err
}

func (s *Server) cycleThinkingLevel(ctx context.Context, c *command) ([]byte, error) {
	level, ok, err := s.ag.CycleThinkingLevel(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []byte(null), nil
	}
	return quoteObject("level", string(level)), nil
}

func (s *Server) availableThinkingLevels(ctx context.Context, c *command) ([]byte, error) {
	levels := s.ag.AvailableThinkingLevels()
	return encode(func(w *jsonwire.ObjectWriter) { w.Value("levels", levels) })
}

func (s *Server) setSteeringMode(ctx context.Context, c *command) ([]byte, error) {
	return s.queueMode(ctx, c, "steeringMode")
}

func (s *Server) setFollowUpMode(ctx context.Context, c *command) ([]byte, error) {
	return s.queueMode(ctx, c, "followUpMode")
}

// queueMode sets the mode of one queue, and saves it in the settings.
func (s *Server) queueMode(ctx context.Context, c *command, key string) ([]byte, error) {
	mode := agent.QueueMode(c.oneOf("mode", true, string(agent.All), string(agent.OneAtATime)))
	if c.err != nil {
		return nil, c.err
	}
	if key == "steeringMode" {
		s.ag.SetQueueModes(mode, "")
	} else {
		s.ag.SetQueueModes("", mode)
	}
	s.save(ctx, key, string(mode))
	return nil, nil
}

// save writes a setting the client changed; a failure is a diagnostic,
// the change holding for this agent.
func (s *Server) save(ctx context.Context, key, value string) {
	err := s.ag.SaveSetting(ctx, key, value)
	if errors.Is(err, agent.ErrNoSettingsFile) {
		return // settings not read from files: the change holds for this agent
	}
	if err != nil {
		s.diag("warning: %s is %s for this session, but could not be saved in the settings: %v", key, value, err)
	}
}

// compact answers when the compaction ends; the next command is handled as
// soon as it has begun.
func (s *Server) compact(ctx context.Context, c *command) ([]byte, error) {
	instructions, _ := c.optStr("customInstructions")
	if c.err != nil {
		return nil, c.err
	}
	wait, err := s.ag.StartCompact(ctx, agent.CompactRequest{Instructions: instructions})
	if err != nil {
		return nil, err
	}
	return nil, s.later(c, true, func() ([]byte, error) {
		res, err := wait()
		if err != nil {
			return nil, err
		}
		return agentjson.MarshalCompactionResult(res)
	})
}

func (s *Server) setAutoCompaction(ctx context.Context, c *command) ([]byte, error) {
	on := c.boolean("enabled")
	if c.err != nil {
		return nil, c.err
	}
	s.ag.SetAutoCompaction(on)
	s.save(ctx, "compaction.enabled", strconv.FormatBool(on))
	return nil, nil
}

func (s *Server) setAutoRetry(ctx context.Context, c *command) ([]byte, error) {
	on := c.boolean("enabled")
	if c.err != nil {
		return nil, c.err
	}
	s.ag.SetAutoRetry(on)
	s.save(ctx, "retry.enabled", strconv.FormatBool(on))
	return nil, nil
}

func (s *Server) abortRetry(ctx context.Context, c *command) ([]byte, error) {
	s.ag.AbortRetry()
	return nil, nil
}

// bash runs the user's command, streaming bash_execution_update events
// with the command's id, and answers when it ends.
func (s *Server) bash(ctx context.Context, c *command) ([]byte, error) {
	line := c.str("command")
	exclude := c.optBool("excludeFromContext")
	if c.err != nil {
		return nil, c.err
	}
	return nil, s.later(c, false, func() ([]byte, error) {
		rec, err := s.ag.RunBash(ctx, c.idText(), line, exclude)
		if err != nil {
			return nil, err
		}
		return encode(func(w *jsonwire.ObjectWriter) {
			w.Str("output", rec.Output)
			if rec.ExitCode != nil {
				w.Int("exitCode", int64(*rec.ExitCode))
			}
			w.Bool("cancelled", rec.Cancelled)
			w.Bool("truncated", rec.Truncated)
			w.OptStr("fullOutputPath", rec.FullOutputPath)
		})
	})
}

func (s *Server) abortBash(ctx context.Context, c *command) ([]byte, error) {
	s.ag.AbortBash()
	return nil, nil
}

// sessionStats is pi's answer, with contextBreakdown added: what fills the
// context, by kind. A breakdown that cannot be made (a session whose path
// cannot be built) is left out and said on Stderr: the rest still holds.
func (s *Server) sessionStats(ctx context.Context, c *command) ([]byte, error) {
	st := s.ag.State()
	b, err := s.ag.ContextBreakdown(ctx, agent.BreakdownRequest{})
	if err != nil {
		s.diag("warning: get_session_stats without contextBreakdown: %v", err)
		b = nil
	}
	return statsData(st, s.ag.Stats(), st.Context, b)
}

func (s *Server) exportHTML(ctx context.Context, c *command) ([]byte, error) {
	return nil, errors.New("export_html is not supported: Prime does not export sessions as HTML (get_entries gives the whole session)")
}

func (s *Server) switchSession(ctx context.Context, c *command) ([]byte, error) {
	path := c.str("sessionPath")
	if c.err != nil {
		return nil, c.err
	}
	if err := s.ag.SwitchSession(path); err != nil {
		return nil, err
	}
	return []byte(notCancelled), nil
}

func (s *Server) fork(ctx context.Context, c *command) ([]byte, error) {
	id := c.str("entryId")
	if c.err != nil {
		return nil, c.err
	}
	res, err := s.ag.Fork(id)
	if err != nil {
		return nil, fmt.Errorf("cannot fork: %w", err)
	}
	return encode(func(w *jsonwire.ObjectWriter) {
		w.Str("text", res.EditorText)
		w.Bool("cancelled", false)
	})
}

func (s *Server) clone(ctx context.Context, c *command) ([]byte, error) {
	if _, err := s.ag.Clone(); err != nil {
		return nil, fmt.Errorf("cannot clone: %w", err)
	}
	return []byte(notCancelled), nil
}

// forkMessages lists every user message of the session file with text,
// in file order: what fork can start from.
func (s *Server) forkMessages(ctx context.Context, c *command) ([]byte, error) {
	b := []byte(`{"messages":[`)
	for i, f := range s.ag.ForkPoints() {
		if i > 0 {
			b = append(b, ',')
		}
		b = quote(append(b, `{"entryId":`...), f.EntryID)
		b = quote(append(b, `,"text":`...), f.Text)
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

// entries gives the session's entries in file order (those after since,
// when given) and the leaf.
func (s *Server) entries(ctx context.Context, c *command) ([]byte, error) {
	since, after := c.optStr("since")
	if c.err != nil {
		return nil, c.err
	}
	if !after {
		since = ""
	} else if since == "" {
		// pi looks the empty id up like any other: no entry has it.
		return nil, fmt.Errorf("Entry not found: %s", since)
	}
	lines, leaf, err := s.ag.EntryLines(since)
	if errors.Is(err, agent.ErrEntryNotFound) {
		return nil, fmt.Errorf("Entry not found: %s", since)
	}
	if err != nil {
		return nil, err
	}
	b, err := appendEntries([]byte(`{"entries":`), lines)
	if err != nil {
		return nil, err
	}
	b = appendLeaf(append(b, `,"leafId":`...), leaf)
	return append(b, '}'), nil
}

func (s *Server) tree(ctx context.Context, c *command) ([]byte, error) {
	tree, err := s.ag.Tree(agent.TreeOptions{Lines: true})
	if err != nil {
		return nil, err
	}
	b, err := appendTree([]byte(`{"tree":`), tree.Roots)
	if err != nil {
		return nil, err
	}
	b = appendLeaf(append(b, `,"leafId":`...), tree.LeafID)
	return append(b, '}'), nil
}

func (s *Server) lastAssistantText(ctx context.Context, c *command) ([]byte, error) {
	text, ok := s.ag.LastAssistantText()
	if !ok {
		return []byte(`{"text":null}`), nil
	}
	return quoteObject("text", text), nil
}

func (s *Server) setSessionName(ctx context.Context, c *command) ([]byte, error) {
	name := c.str("name")
	if c.err != nil {
		return nil, c.err
	}
	return nil, s.ag.SetSessionName(name)
}

// commands lists the commands a prompt can invoke: Prime has no extension
// commands, prompt templates or skills, so none.
// commands lists the prompt templates and skills in pi's shape (each with
// its source and where it was found), for a client to run through prompt.
func (s *Server) commands(ctx context.Context, c *command) ([]byte, error) {
	type sourceInfo struct {
		Path   string `json:"path"`
		Source string `json:"source"`
		Scope  string `json:"scope"`
		Origin string `json:"origin"`
	}
	type entry struct {
		Name        string     `json:"name"`
		Description string     `json:"description,omitzero"`
		Source      string     `json:"source"`
		SourceInfo  sourceInfo `json:"sourceInfo"`
	}
	out := struct {
		Commands []entry `json:"commands"`
	}{Commands: []entry{}}
	for _, cmd := range s.ag.Commands() {
		scope := "user"
		if cmd.Project {
			scope = "project"
		}
		out.Commands = append(out.Commands, entry{Name: cmd.Name, Description: cmd.Description, Source: cmd.Source,
			SourceInfo: sourceInfo{Path: cmd.File, Source: "local", Scope: scope, Origin: "top-level"}})
	}
	return json.Marshal(out)
}

// navigateTree moves to another entry of the session tree, summarizing the
// branch left when asked (Prime's addition to the protocol). Like pi's tree
// navigation it waits for no run: while the agent is busy it is refused.
func (s *Server) navigateTree(ctx context.Context, c *command) ([]byte, error) {
	req := agent.NavigateRequest{
		TargetID:            c.str("targetId"),
		Summarize:           c.optBool("summarize"),
		ReplaceInstructions: c.optBool("replaceInstructions"),
	}
	req.Instructions, _ = c.optStr("customInstructions")
	req.Label, _ = c.optStr("label")
	if c.err != nil {
		return nil, c.err
	}
	if s.ag.Busy() {
		return nil, errors.New("the agent is busy: wait for it to finish, or abort, before navigating the tree")
	}
	wait, err := s.ag.StartNavigate(ctx, req)
	if err != nil {
		return nil, err
	}
	return nil, s.later(c, true, func() ([]byte, error) {
		res, err := wait()
		var ce *agent.CancelledError
		switch {
		case errors.As(err, &ce):
			return encode(func(w *jsonwire.ObjectWriter) {
				w.Str("editorText", "")
				w.Bool("cancelled", true)
				if !errors.Is(err, agent.ErrHookCancelled) {
					w.Bool("aborted", true)
				}
			})
		case errors.Is(err, agent.ErrEntryNotFound):
			return nil, fmt.Errorf("Entry not found: %s", req.TargetID)
		case err != nil:
			return nil, err
		}
		var summary jsontext.Value
		if res.SummaryEntry != nil {
			line, err := s.ag.EntryLine(res.SummaryEntry.ID)
			if err == nil {
				summary, err = entryLine(line)
			}
			if err != nil {
				return nil, fmt.Errorf("the branch summary was written, but reading it back failed: %w", err)
			}
		}
		return encode(func(w *jsonwire.ObjectWriter) {
			w.Str("editorText", res.EditorText)
			w.Bool("cancelled", false)
			if summary != nil {
				w.Raw("summaryEntry", summary)
			}
		})
	})
}
