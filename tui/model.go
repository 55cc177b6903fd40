package tui

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
	"github.com/prime-agent/prime/settings"
)

// Model is the UI's one bubbletea model. It owns every piece of screen
// state; the components it is made of (the transcript items, the editor,
// the footer, the selectors) render to strings and are changed only here,
// in Update. Work that waits on something — the agent's methods, files,
// settings — runs in tea.Cmds, whose results come back as messages.
type Model struct {
	ctx  context.Context
	ag   *agent.Agent
	opts Options
	st   styles
	md   markdown

	width, height int
	expanded      bool
	showThinking  bool
	// statsPending is set while the session's first sums (the footer's
	// tokens and cost) are added up off the UI, for a session long enough
	// that reading every message back would hold up the screen; statsGen
	// counts those sums, so that only the latest is shown.
	statsPending bool
	statsGen     int

	// items is the whole transcript; items[:printed] have been handed to
	// the terminal's scrollback (or are on their way: printing).
	items    []item
	printed  int
	printing bool
	// pending are the pieces of text waiting to be printed, in order.
	pending []printPiece
	// liveLines is the height of the live area as last drawn.
	liveLines int
	// repaint asks for the scrollback to be cleared and the transcript
	// printed again (a new width, Ctrl-O, Ctrl-T, another session).
	repaint bool

	cur   *assistantItem
	tools map[string]*toolItem
	// streamTools maps the reply's content index to its tool call's block.
	streamTools map[int]*toolItem
	bash        *bashItem

	editor  editor
	overlay overlay
	footer  footer

	// What the agent is doing, from its events.
	busy        bool
	compacting  agent.Reason // "" when no compaction runs
	compactNote string       // what the compaction is doing now
	manual      bool         // a /compact the UI started is running
	summarizing bool
	navigating  bool
	retry       *agent.RetryStart
	retryAt     time.Time
	steering    []string
	followUp    []string
	// held are messages typed during a compaction, sent once it ends.
	held []heldMessage

	// serial are the agent calls waiting to run one after another (so that
	// two prompts typed quickly reach the agent in order); calling is set
	// while one runs.
	serial  []func() tea.Msg
	calling bool

	// started is set once the renderer has drawn the live area (a moment
	// after Init): printing above the live area before that would place
	// the text at the top of the screen instead of where the UI begins.
	started   bool
	frame     int
	ticking   bool
	now       time.Time
	lastCtrlC time.Time
	lastEsc   time.Time
	quitting  bool
	// bashSeq numbers the user's shell commands.
	bashSeq int
}

// heldMessage is a message typed while a compaction ran.
type heldMessage struct {
	text     string
	behavior agent.Behavior
}

// Messages of the model's own.
type (
	// eventsMsg carries agent events, in order.
	eventsMsg []agent.Event
	// printedMsg says a chunk of transcript reached the scrollback.
	printedMsg struct{}
	// tickMsg animates the indicators and the elapsed times.
	tickMsg time.Time
	// resultMsg applies the outcome of a command's work to the model.
	resultMsg func(m *Model) tea.Cmd
	// serialDoneMsg applies a serial call's outcome and starts the next.
	serialDoneMsg struct{ then resultMsg }
	// branchMsg delivers the git branch.
	branchMsg string
	// startedMsg says the renderer has had time to draw the first frame.
	startedMsg struct{}
)

// New returns the model for an agent. Use Run to start it on a terminal;
// tests run it in a tea.Program of their own (the agent's events must then
// reach it through an Events started with that program).
func New(ctx context.Context, ag *agent.Agent, opts Options) *Model {
	m := &Model{
		ctx: ctx, ag: ag, opts: opts, st: newStyles(),
		tools: map[string]*toolItem{}, streamTools: map[int]*toolItem{},
		editor: newEditor(), width: 80, height: 24,
	}
	m.showThinking = !opts.Settings.Interface().HideThinkingBlock
	m.now = m.clock()
	m.load(true)
	m.checkLong()
	m.refreshFooter()
	return m
}

// checkLong sets statsPending when the session is long enough for its first
// sums to be made off the UI.
func (m *Model) checkLong() {
	m.ag.View(func(s *session.Session) { m.statsPending = s.Len() >= asyncStatsEntries })
}

// asyncStatsEntries is the session length from which the first sums of the
// footer are made off the UI (about 80 ms of reading at 10,000 entries).
const asyncStatsEntries = 10_000

// statsCmd adds up the session's usage for the footer, the first time, off
// the UI.
func (m *Model) statsCmd() tea.Cmd {
	if !m.statsPending {
		return nil
	}
	m.statsGen++
	ag, gen := m.ag, m.statsGen
	return async(func() resultMsg {
		st := ag.Stats()
		return func(m *Model) tea.Cmd {
			if gen == m.statsGen {
				m.statsPending, m.footer.stats = false, st
			}
			return nil
		}
	})
}

func (m *Model) clock() time.Time {
	if m.opts.Now != nil {
		return m.opts.Now()
	}
	return time.Now()
}

// Init looks up the git branch and sends the first message, if any.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.branchCmd(), m.chooseModel(), m.statsCmd(),
		tea.Tick(startDelay, func(time.Time) tea.Msg { return startedMsg{} })}
	for i, p := range m.opts.Prompts {
		behavior := agent.Steer
		if i > 0 {
			behavior = agent.FollowUp
		}
		cmds = append(cmds, m.submit(p, behavior))
	}
	return tea.Batch(cmds...)
}

// chooseModel has the agent choose its model (and read the context files)
// before the header is printed, so that the header lists them and the
// footer names the model; a model that cannot be used is said at once.
func (m *Model) chooseModel() tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		_, err := ag.Model(ctx)
		return func(m *Model) tea.Cmd {
			if h, ok := m.items[0].(*headerItem); ok {
				m.fillHeader(h)
				h.ready = true
			}
			if err != nil {
				m.warn(err.Error())
			}
			return nil
		}
	})
}

func (m *Model) branchCmd() tea.Cmd {
	dir := m.opts.CWD
	return func() tea.Msg { return branchMsg(gitBranch(dir)) }
}

// Update is the one place the UI's state changes.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if msg.Width != m.width && m.printed > 0 {
			m.repaint = true
		}
		m.width, m.height = msg.Width, msg.Height
		m.editor.setWidth(m.width)
	case eventsMsg:
		dirty := false
		for _, e := range msg {
			cmds = append(cmds, m.onEvent(e))
			dirty = dirty || changesFooter(e)
		}
		if dirty {
			m.refreshFooter()
		}
	case printedMsg:
		m.printing = false
	case tickMsg:
		m.now = time.Time(msg)
		m.frame++
		m.ticking = false
		if m.footer.background.Writing {
			// Nothing tells the UI when the summary is done before the
			// next check reports it: the footer asks.
			m.footer.background = m.ag.BackgroundSummary()
		}
	case startedMsg:
		m.started = true
	case branchMsg:
		m.footer.branch = string(msg)
	case resultMsg:
		if msg != nil {
			cmds = append(cmds, msg(m))
		}
		m.refreshFooter()
	case serialDoneMsg:
		m.calling = false
		if msg.then != nil {
			cmds = append(cmds, msg.then(m))
		}
		m.refreshFooter()
		cmds = append(cmds, m.nextSerial())
	case tea.KeyPressMsg:
		cmds = append(cmds, m.onKey(msg))
	case tea.PasteMsg:
		if m.overlay != nil {
			cmds = append(cmds, m.overlay.paste(m, msg.Content))
		} else {
			cmds = append(cmds, m.editor.update(msg))
		}
	default:
		if m.overlay == nil {
			cmds = append(cmds, m.editor.update(msg))
		}
	}
	if m.quitting {
		return m, tea.Quit
	}
	cmds = append(cmds, m.flush(), m.tick())
	return m, tea.Batch(cmds...)
}

// animating reports whether something on screen moves: an indicator, a
// running tool's elapsed time, or the background summary's note.
func (m *Model) animating() bool {
	if m.indicator() != "" || m.footer.background.Writing {
		return true
	}
	for _, t := range m.tools {
		if t.running && !t.done {
			return true
		}
	}
	return false
}

func (m *Model) tick() tea.Cmd {
	if m.ticking || !m.animating() {
		return nil
	}
	m.ticking = true
	return tea.Tick(100*time.Millisecond, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// add appends an item to the transcript. A status line replaces the status
// line before it when nothing came between them.
func (m *Model) add(it item) {
	if n, ok := it.(*noticeItem); ok && n.level == agent.NoticeInfo && len(m.items) > m.printed {
		if last, ok := m.items[len(m.items)-1].(*noticeItem); ok && last.level == agent.NoticeInfo {
			m.items[len(m.items)-1] = it
			return
		}
	}
	m.items = append(m.items, it)
}

func (m *Model) status(text string) { m.add(&noticeItem{level: agent.NoticeInfo, text: text}) }
func (m *Model) warn(text string)   { m.add(&noticeItem{level: agent.NoticeWarning, text: text}) }
func (m *Model) fail(text string)   { m.add(&noticeItem{level: agent.NoticeError, text: text}) }

func (m *Model) newView() *view {
	return &view{width: max(m.width, 10), expanded: m.expanded, showThinking: m.showThinking, st: &m.st, md: &m.md, now: m.now, frame: m.frame}
}

// flush hands the finished items at the head of the live area to the
// scrollback, in order: one print at a time, the next when the terminal
// has it. A status line stays live while it is the last item, so that the
// next status can replace it.
//
// A print taller than the room above the live area would scroll the live
// area itself into the scrollback (the renderer makes room by scrolling
// the whole screen), so the text goes out in pieces that fit.
func (m *Model) flush() tea.Cmd {
	if m.printing || !m.started {
		return nil
	}
	if m.repaint {
		m.pending = nil // all of it is printed again
	}
	if len(m.pending) == 0 {
		m.collect()
	}
	if len(m.pending) == 0 {
		return nil
	}
	piece := m.pending[0]
	m.pending = m.pending[1:]
	m.printing = true
	cmds := []tea.Cmd{tea.Println(piece.text)}
	if piece.clear {
		cmds = append(cmds, tea.ClearScreen)
	}
	cmds = append(cmds, func() tea.Msg { return printedMsg{} })
	return tea.Sequence(cmds...)
}

// printPiece is a part of the transcript on its way to the scrollback;
// clear erases the screen and the scrollback first.
type printPiece struct {
	text  string
	clear bool
}

// printable returns the end of the run of items from start that are ready
// for the scrollback: finished, except a status line that is the last item
// (the next status may replace it).
func (m *Model) printable(start int) int {
	end := start
	for end < len(m.items) && m.items[end].finished() {
		if n, ok := m.items[end].(*noticeItem); ok && n.level == agent.NoticeInfo && end == len(m.items)-1 && !m.repaint {
			break
		}
		end++
	}
	return end
}

// collect renders the items ready for the scrollback into pieces.
func (m *Model) collect() {
	start := m.printed
	if m.repaint {
		start = 0
	}
	end := m.printable(start)
	if end == start && !m.repaint {
		return
	}
	v := m.newView()
	// One column short of the terminal: bubbletea ends each printed line
	// by erasing the rest of it, and a terminal whose cursor waits in the
	// last column after a full line (xterm's pending wrap) erases that
	// column's character with it.
	v.width = max(m.width-1, 10)
	var chunks []string
	for i, it := range m.items[start:end] {
		if s := it.render(v); s != "" {
			if start+i > 0 {
				s = "\n" + s // a blank line between blocks
			}
			chunks = append(chunks, s)
		}
	}
	m.printed = end
	lines := strings.Split(strings.Join(chunks, "\n"), "\n")
	clear := m.repaint
	m.repaint = false
	if len(chunks) == 0 && !clear {
		return
	}
	room := max(m.height-m.liveLines-2, 1)
	for len(lines) > 0 {
		n := min(room, len(lines))
		text := strings.Join(lines[:n], "\n")
		lines = lines[n:]
		if clear {
			// Erase the screen and the scrollback, then print everything
			// again from the top; the renderer redraws the live area below.
			text = "\x1b[H\x1b[2J\x1b[3J" + text
		}
		m.pending = append(m.pending, printPiece{text: text, clear: clear})
		clear = false
	}
}

// View draws the live area: the items still changing, the queued messages,
// the editor (or the selector open in its place) and the footer.
func (m *Model) View() tea.View {
	v := m.newView()
	var parts []string
	// Items about to be printed are not drawn here too: a frame holding
	// them would be scrolled into the scrollback by their print.
	for _, it := range m.items[m.printable(min(m.printed, len(m.items))):] {
		if s := it.render(v); s != "" {
			parts = append(parts, s)
		}
	}
	var below strings.Builder
	if q := m.queueLines(v); q != "" {
		below.WriteString("\n" + q + "\n")
	}
	below.WriteString("\n")
	if m.overlay != nil {
		below.WriteString(m.overlay.render(m, v) + "\n")
	} else {
		rule := m.st.rule
		if strings.HasPrefix(m.editor.value(), "!") {
			rule = m.st.warning
		}
		below.WriteString(m.editor.render(v, m.indicator(), rule) + "\n")
	}
	below.WriteString(m.footer.render(v))
	// The live area never grows past the screen: what changes there (a
	// reply being streamed) shows its end, and reaches the scrollback whole
	// once it is finished. A taller frame would push copies of itself into
	// the scrollback.
	live := strings.Join(parts, "\n\n")
	if live != "" {
		room := m.height - strings.Count(below.String(), "\n") - 2
		lines := strings.Split(live, "\n")
		if len(lines) > room {
			lines = lines[len(lines)-max(room, 0):]
		}
		live = strings.Join(lines, "\n")
	}
	content := below.String()
	if live != "" {
		if m.printed > 0 {
			live = "\n" + live // the blank line the print will have
		}
		content = live + "\n" + content
	}
	m.liveLines = strings.Count(content, "\n") + 1
	out := tea.NewView(content)
	out.WindowTitle = "prime"
	return out
}

// startDelay is how long the first print waits for the renderer's first
// frame (it draws 60 frames a second).
const startDelay = 100 * time.Millisecond

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// indicator is the line drawn in the editor's top rule while the agent
// works: the working, retry, compaction or branch-summary loader.
func (m *Model) indicator() string {
	spin := m.st.accent.Render(spinnerFrames[m.frame%len(spinnerFrames)])
	switch {
	case m.compacting != "" || m.manual:
		text := "compacting… (escape to cancel)"
		switch m.compacting {
		case agent.ReasonThreshold:
			text = "auto-compacting… (escape to cancel)"
		case agent.ReasonOverflow:
			text = "context overflow: compacting… (escape to cancel)"
		}
		if m.compactNote != "" {
			text += " " + m.st.muted.Render(m.compactNote)
		}
		return spin + " " + text
	case m.summarizing || m.navigating:
		return spin + " summarizing branch… (escape to cancel)"
	case m.retry != nil:
		left := max(m.retryAt.Sub(m.now), 0).Round(time.Second)
		return spin + " " + m.st.warning.Render("retrying ("+itoa(m.retry.Attempt)+"/"+itoa(m.retry.MaxAttempts)+") in "+left.String()+"… (escape to cancel)")
	case m.bash != nil && !m.bash.done:
		return spin + " running $ " + truncate(oneLine(m.bash.command), 40)
	case m.busy:
		return spin + " working… (escape to interrupt)"
	}
	if !m.lastCtrlC.IsZero() && m.now.Sub(m.lastCtrlC) < doublePress {
		return m.st.muted.Render("ctrl+c again to exit")
	}
	return ""
}

// queueLines lists the messages waiting: the agent's steering and
// follow-up queues, and those held back during a compaction.
func (m *Model) queueLines(v *view) string {
	var lines []string
	for _, s := range m.steering {
		lines = append(lines, v.st.muted.Render(truncate("Steering: "+oneLine(s), v.width)))
	}
	for _, s := range m.followUp {
		lines = append(lines, v.st.muted.Render(truncate("Follow-up: "+oneLine(s), v.width)))
	}
	for _, h := range m.held {
		lines = append(lines, v.st.muted.Render(truncate("After compaction: "+oneLine(h.text), v.width)))
	}
	if len(m.steering)+len(m.followUp) > 0 {
		lines = append(lines, v.st.dim.Render("↳ alt+up to edit all queued messages"))
	}
	return strings.Join(lines, "\n")
}

// changesFooter reports whether an event can change what the footer
// shows. The footer's figures cost a pass over the session (the context's
// estimate, the totals), too much for every streamed delta.
func changesFooter(e agent.Event) bool {
	switch e.(type) {
	case agent.MessageUpdate, agent.ToolUpdate, agent.BashUpdate, *agent.Progress, agent.QueueUpdate,
		agent.ToolStart, agent.TurnStart, agent.AgentStart:
		return false
	}
	return true
}

// refreshFooter reads the agent's state for the footer.
func (m *Model) refreshFooter() {
	s := m.ag.State()
	m.footer.cwd, m.footer.home = m.opts.CWD, m.opts.Home
	m.footer.name = s.SessionName
	m.footer.usage = s.Context
	m.footer.auto = s.AutoCompaction
	m.footer.model = s.Model
	m.footer.thinking = s.ThinkingLevel
	if !m.statsPending {
		m.footer.stats = m.ag.Stats()
	}
	m.footer.background = m.ag.BackgroundSummary()
}

// async runs work in a command; the function it returns is applied to the
// model when it is done.
func async(work func() resultMsg) tea.Cmd {
	return func() tea.Msg { return work() }
}

// call queues an agent call that must keep its order with the others
// (prompts, model and level changes).
func (m *Model) call(work func() resultMsg) tea.Cmd {
	m.serial = append(m.serial, func() tea.Msg { return serialDoneMsg{then: work()} })
	return m.nextSerial()
}

func (m *Model) nextSerial() tea.Cmd {
	if m.calling || len(m.serial) == 0 {
		return nil
	}
	next := m.serial[0]
	m.serial = m.serial[1:]
	m.calling = true
	return next
}

// submit sends what the user typed: a command, a shell command, or a
// message for the model (held back while a compaction runs).
func (m *Model) submit(text string, behavior agent.Behavior) tea.Cmd {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil
	}
	if name, args, ok := parseCommand(trimmed); ok {
		return m.command(name, args)
	}
	if w := unknownCommand(trimmed); w != "" {
		m.warn("Unknown command " + w + ": type / to see the commands")
		if m.editor.value() == "" {
			m.editor.setValue(text)
		}
		return nil
	}
	if cmd, ok := strings.CutPrefix(trimmed, "!!"); ok {
		return m.runBash(strings.TrimSpace(cmd), true)
	}
	if cmd, ok := strings.CutPrefix(trimmed, "!"); ok {
		return m.runBash(strings.TrimSpace(cmd), false)
	}
	if m.compacting != "" || m.manual || m.navigating {
		m.held = append(m.held, heldMessage{text: text, behavior: behavior})
		m.status("Queued message for after compaction")
		return nil
	}
	return m.prompt(text, behavior)
}

// prompt hands a message to the agent. A message the agent refuses goes
// back into the editor, so that nothing typed is lost.
func (m *Model) prompt(text string, behavior agent.Behavior) tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return m.call(func() resultMsg {
		_, err := ag.Prompt(ctx, text, agent.PromptOptions{Behavior: behavior})
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail(err.Error())
				if m.editor.value() == "" {
					m.editor.setValue(text)
				}
			}
			return nil
		}
	})
}

// releaseHeld sends the messages held during a compaction.
func (m *Model) releaseHeld() tea.Cmd {
	held := m.held
	m.held = nil
	var cmds []tea.Cmd
	for _, h := range held {
		cmds = append(cmds, m.prompt(h.text, h.behavior))
	}
	return tea.Batch(cmds...)
}

// onEvent applies one agent event.
func (m *Model) onEvent(e agent.Event) tea.Cmd {
	switch e := e.(type) {
	case agent.AgentStart:
		m.busy = true
	case agent.AgentSettled:
		m.busy = false
		m.retry = nil
		if e.Aborted && !m.showsAbort() {
			m.add(&assistantItem{done: true, stop: llm.StopReasonAborted})
		}
		return m.branchCmd()
	case agent.MessageStart:
		switch msg := e.Message.(type) {
		case *llm.UserMessage:
			m.add(&userItem{text: userText(msg.Content)})
		case *llm.AssistantMessage:
			m.cur = &assistantItem{}
			m.streamTools = map[int]*toolItem{}
			m.add(m.cur)
		}
	case agent.MessageUpdate:
		m.onStream(e.Event)
	case agent.MessageEnd:
		if am, ok := e.Message.(*llm.AssistantMessage); ok {
			if m.cur == nil {
				m.cur = &assistantItem{}
				m.add(m.cur)
			}
			m.cur.finish(am)
			for _, c := range am.ToolCalls() {
				if t := m.tools[c.ID]; t != nil {
					t.args = c.Arguments
				}
			}
			m.cur = nil
		}
	case agent.ToolStart:
		t := m.tool(e.Call.ID, e.Call.Name)
		t.args, t.running, t.started = e.Call.Arguments, true, m.clock()
	case agent.ToolUpdate:
		m.tool(e.Call.ID, e.Call.Name).setResult(e.Partial)
	case agent.ToolEnd:
		t := m.tool(e.Call.ID, e.Call.Name)
		t.args = e.Call.Arguments
		t.setResult(e.Result)
		t.isError = t.isError || e.IsError
		t.done, t.running, t.took = true, false, e.Duration
		delete(m.tools, e.Call.ID)
	case agent.QueueUpdate:
		m.steering, m.followUp = e.Steering, e.FollowUp
	case agent.RetryStart:
		r := e
		m.retry, m.retryAt = &r, m.clock().Add(e.Delay)
	case agent.RetryEnd:
		m.retry = nil
		if !e.Success {
			m.fail(e.FinalError)
		}
	case agent.CompactionStart:
		m.compacting, m.compactNote = e.Reason, ""
	case *agent.Progress:
		m.onProgress(e)
	case agent.CompactionEnd:
		return m.onCompactionEnd(e)
	case agent.CompactionUndone:
		return m.onUndone(e.Result)
	case agent.BackgroundCompaction:
		m.onBackground(e)
	case agent.BranchSummaryStart:
		m.summarizing = true
	case agent.BranchSummaryEnd:
		m.summarizing = false
	case agent.SessionChanged:
		m.load(false)
		if m.checkLong(); m.statsPending {
			m.footer.stats = agent.Stats{} // not the last session's
			return m.statsCmd()
		}
	case agent.Notice:
		m.add(&noticeItem{level: e.Level, text: e.Text})
	case agent.BashUpdate:
		if m.bash != nil && m.bash.id == e.ID {
			m.bash.output += e.Delta
		}
	}
	return nil
}

// onBackground says what became of a summary written in the background
// when it cost something for nothing: it failed, or no longer fit the
// conversation. (Started, ready and used show in the footer and in the
// compaction's receipt; a cancel follows the user's own Escape.)
func (m *Model) onBackground(e agent.BackgroundCompaction) {
	switch e.Kind {
	case agent.BackgroundFailed:
		why := "unknown error"
		if e.Err != nil {
			why = e.Err.Error()
		}
		m.warn("The background summary failed (" + why + "); a compaction at the threshold writes its own")
	case agent.BackgroundOvertaken:
		m.status("Background summary dropped: " + cmp.Or(e.Why, "it no longer fits the conversation"))
	}
}

// showsAbort reports whether the last reply shown says it was aborted.
func (m *Model) showsAbort() bool {
	for i := len(m.items) - 1; i >= 0; i-- {
		if a, ok := m.items[i].(*assistantItem); ok {
			return a.stop == llm.StopReasonAborted
		}
		if _, ok := m.items[i].(*userItem); ok {
			return false
		}
	}
	return false
}

// tool returns the block of a call, making it when the call is new.
func (m *Model) tool(id, name string) *toolItem {
	if t := m.tools[id]; t != nil {
		return t
	}
	t := &toolItem{id: id, name: name}
	m.tools[id] = t
	m.add(t)
	return t
}

// onStream applies a streamed step of the reply.
func (m *Model) onStream(e llm.Event) {
	if m.cur == nil {
		return
	}
	switch e.Type {
	case llm.EventToolCallStart:
		var id, name string
		if c, ok := e.Content.(llm.ToolCall); ok {
			id, name = c.ID, c.Name
		}
		if id == "" {
			return
		}
		m.streamTools[e.Index] = m.tool(id, name)
	case llm.EventToolCallDelta:
		if t := m.streamTools[e.Index]; t != nil {
			t.rawArgs += e.Delta
		}
	case llm.EventToolCallEnd:
		if c, ok := e.Content.(llm.ToolCall); ok {
			m.tool(c.ID, c.Name).args = c.Arguments
		}
	default:
		m.cur.delta(e)
	}
}

// onProgress shows what a compaction or branch summary is doing.
func (m *Model) onProgress(p *agent.Progress) {
	switch p.Kind {
	case agent.ProgressRetry:
		m.compactNote = "(the provider failed; trying again in " + p.Delay.Round(time.Second).String() + ")"
	case agent.ProgressOverflowRetry:
		m.compactNote = "(too large for the summarizer; sending less)"
	case agent.ProgressFallback:
		m.compactNote = "(no model can write it; building the summary by code)"
	case agent.ProgressHookReport:
		if p.HookReport != nil {
			m.warn(p.HookReport.Error())
		}
	}
}

// onCompactionEnd shows a compaction's outcome: the [compaction] block, or
// why there is none, then sends what was typed meanwhile.
func (m *Model) onCompactionEnd(e agent.CompactionEnd) tea.Cmd {
	m.compacting, m.compactNote = "", ""
	switch {
	case e.Result != nil:
		r := e.Result
		instr := r.Plan.Instructions
		summary := ""
		if r.Compaction != nil {
			summary = r.Compaction.Summary
		}
		m.add(&compactionItem{tokensBefore: r.TokensBefore, instructions: instr, summary: summary, receipt: r.Receipt})
	case e.Aborted:
		if e.Reason == agent.ReasonManual {
			m.fail("Compaction cancelled")
		} else {
			m.status("Auto-compaction cancelled")
		}
	case e.Err != nil:
		var nc *compaction.NotCompactableError
		if errors.As(e.Err, &nc) && e.Reason == agent.ReasonManual {
			m.warn(nc.Error())
		} else {
			m.fail(strings.TrimPrefix(agent.CompactionErrorText(e.Reason, e.Err), "Error: "))
		}
	}
	if m.manual {
		return nil // the /compact command's result releases the held messages
	}
	return m.releaseHeld()
}

// userText is a user message's text, with a mark for each image.
func userText(content []llm.Content) string {
	var parts []string
	for _, c := range content {
		switch c := c.(type) {
		case llm.Text:
			parts = append(parts, c.Text)
		case llm.Image:
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

func itoa(n int) string { return numfmt.Commas(n) }

// settingsSet writes one setting to the global file and applies the new
// snapshot.
func (m *Model) settingsSet(key, value string) tea.Cmd {
	ctx, st := m.ctx, m.opts.Settings
	return async(func() resultMsg {
		next, err := st.Set(ctx, settings.Global, key, value)
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail("could not save " + key + ": " + err.Error())
				return nil
			}
			m.opts.Settings = next
			return nil
		}
	})
}
