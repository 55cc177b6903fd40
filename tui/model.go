package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/numfmt"
	"github.com/prime-agent/prime/llm"
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
	md   replies

	width, height int
	sized         bool // the terminal's size is known
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
	// liveLines is the height of the live area as last drawn; it drew the
	// items [liveStart, liveEnd).
	liveLines, liveStart, liveEnd int
	// screenRows is at least the rows of the screen printed text takes
	// (counted since the last time the screen was cleared, at most its
	// height): with the live area below, a full screen.
	screenRows int
	// floor is the least height of the live area while the screen is
	// full, pad the blank rows at its top that keep it there: a live area
	// that shrank would leave blank rows below the footer (the scrollback
	// cannot come back down), so it keeps its height until printed text
	// takes the rows it gives up. (Closing /tree leaves such rows above the
	// editor. pi too leaves the rows a shrinking screen gives up, by
	// default — its terminal.clearOnShrink is off, a full redraw flickers —
	// but below its footer; here the footer stays on the last row.)
	floor, pad int
	// shrank is when the live area was last drawn shorter than before,
	// shrankView (with a drawClock) that view's number.
	shrank     time.Time
	shrankView uint64
	// drawn, when the terminal's writes pass through it, tells when a
	// view has been written (nil under test harnesses that own the
	// output: prints then wait printWait).
	drawn *drawClock
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
	cprog       compactProgress
	manual      bool // a /compact the UI started is running
	summarizing bool
	navigating  bool
	retry       *agent.RetryStart
	retryAt     time.Time
	failed      *assistantItem // the failed reply held until the run ends (retry.go)
	steering    []string
	followUp    []string
	// undoPins are the pins before an /uncompact this UI started
	// (undoing), to say what the undo did to them.
	undoPins []agent.Pin
	undoing  bool
	// held are messages typed during a compaction, sent once it ends.
	held []heldMessage

	// serial are the agent calls waiting to run one after another (so that
	// two prompts typed quickly reach the agent in order); calling is set
	// while one runs.
	serial  []func() tea.Msg
	calling bool

	// started is set once the first frame is out (start.go): until then
	// the live area is not drawn, so that the first thing the terminal
	// shows is the whole layout, the transcript above the live area.
	started   bool
	starting  bool // the first frame is on its way
	frame     int
	ticking   bool
	now       time.Time
	lastCtrlC time.Time
	lastEsc   time.Time
	quitting  bool
	// exiting is set when the user asked to exit while the agent worked:
	// it is stopped first (exit).
	exiting bool
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
	// clearedMsg says the screen was cleared for a print (redrawn).
	clearedMsg struct{}
	// waitedMsg ends a print's wait for the renderer (printWait).
	waitedMsg struct{}
	// tickMsg animates the indicators and the elapsed times.
	tickMsg time.Time
	// resultMsg applies the outcome of a command's work to the model.
	resultMsg func(m *Model) tea.Cmd
	// serialDoneMsg applies a serial call's outcome and starts the next.
	serialDoneMsg struct{ then resultMsg }
	// exitNowMsg ends the wait of an exit for the agent to stop (exit).
	exitNowMsg struct{}
	// startedMsg says the first frame has been written (startFrame).
	startedMsg struct{}
	// branchMsg delivers the git branch.
	branchMsg string
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
	m.showThinking = !ag.Preferences().HideThinkingBlock
	m.now = m.clock()
	m.load(true)
	m.footer.branch = gitBranch(opts.CWD) // in the first frame, not a moment after
	m.checkLong()
	m.refreshFooter()
	return m
}

// checkLong sets statsPending when the session is long enough for its first
// sums to be made off the UI.
func (m *Model) checkLong() {
	m.statsPending = m.ag.EntryCount() >= asyncStatsEntries
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

// Init has the agent choose its model and sends the first message, if any.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.chooseModel()} // the sums wait for the first frame (startFrame)
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
				m.warn(noModelHint(err))
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
		m.width, m.height, m.sized = msg.Width, msg.Height, true
		m.floor = 0
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
	case clearedMsg:
		cmds = append(cmds, m.redrawn())
	case waitedMsg:
	case tickMsg:
		m.now = time.Time(msg)
		m.frame++
		m.ticking = false
		if m.footer.background.Writing {
			// Nothing tells the UI when the summary is done before the
			// next check reports it: the footer asks.
			m.footer.background = m.ag.BackgroundSummary()
		}
	case exitNowMsg:
		m.quitting = true
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
			cmds = append(cmds, m.editor.paste(imagePaste(msg.Content)))
		}
	default:
		if m.overlay == nil {
			cmds = append(cmds, m.editor.update(msg))
		}
	}
	if m.exiting && m.stopped() {
		m.quitting = true
	}
	if m.quitting {
		return m, tea.Quit
	}
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg, resultMsg, serialDoneMsg, printedMsg:
		m.settlePad()
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

// fail shows an error, unless the same error is the last thing shown
// (a message sent again after it failed fails the same way: saying it
// twice tells the user nothing new).
func (m *Model) fail(text string) {
	if n := len(m.items); n > 0 {
		if last, ok := m.items[n-1].(*noticeItem); ok && last.level == agent.NoticeError && last.text == text {
			return
		}
	}
	m.add(&noticeItem{level: agent.NoticeError, text: text})
}

func (m *Model) newView() *view {
	return &view{width: max(m.width, 10), expanded: m.expanded, showThinking: m.showThinking, st: &m.st, md: &m.md, now: m.now, frame: m.frame}
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
	m.footer.permission = permissionLabel(m.ag, m.opts.Sandboxed)
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

// userText is a user message's text, with a mark for each image.
func userText(content []llm.Content) string { return agent.UserText(content) }

func itoa(n int) string { return numfmt.Commas(n) }

// settingsSet writes one setting to the global file and applies the new
// snapshot.
func (m *Model) settingsSet(key, value string) tea.Cmd {
	ctx, ag := m.ctx, m.ag
	return async(func() resultMsg {
		err := ag.SaveSetting(ctx, key, value)
		return func(m *Model) tea.Cmd {
			if err != nil {
				m.fail("could not save " + key + ": " + err.Error())
			}
			return nil
		}
	})
}
