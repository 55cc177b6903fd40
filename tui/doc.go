// Package tui is Prime's interactive terminal UI: what "prime" opens on a
// terminal. It renders the events of an agent.Agent and calls the agent's
// methods; it holds no conversation logic of its own, reads the session
// only through the agent's read models (the transcript, the tree, fork
// points, preferences) and changes nothing but through the agent (/settings
// and Ctrl-T save with Agent.SaveSetting).
//
// # Structure
//
// One bubbletea model, [Model], owns all screen state and changes it only in
// Update. The things on screen are components that render to strings for a
// width and hold no terminal state:
//
//   - the transcript, a list of items (item): the header, user messages,
//     replies (markdown through package markdown, thinking shown or folded), one
//     block per tool call (title, live output, elapsed time, a bounded
//     preview, an edit's coloured diff), the compaction block (expanded:
//     its receipt, then the summary) and the branch-summary block, the
//     user's shell commands, the /context and /pins blocks, status and
//     error lines;
//   - the editor (a bubbles textarea with history and / and @ completion);
//   - the footer (directory and git branch, session name, token and cost
//     totals, the context meter, the background summary's state, the model
//     and thinking level);
//   - overlays that take the editor's place and its keys: the list
//     selectors (model, thinking level, settings, fork, "Summarize
//     branch?"), one-line dialogs, the /tree selector and the session
//     picker.
//
// Agent events reach the program through [Events], whose Send (the agent's
// Config.Events) never blocks: the agent may emit from the goroutine of a
// method the UI itself calls. Everything that waits — the agent's methods,
// listing files and sessions, writing settings — runs in tea.Cmds whose
// results come back as messages; agent calls whose order matters (prompts,
// model and level changes) run one after another.
//
// # Rendering
//
// The UI is inline, as pi's: finished items are printed once into the
// terminal's own scrollback (tea.Println, strictly in order: one print at a
// time, the next when the terminal has it), and the View is only the live
// area — the items still changing, the queued messages, the editor or the
// open overlay, and the footer. A status line stays live while it is the
// last item, so that the next status replaces it, as in pi. When the
// transcript must be drawn again — a new terminal width, Ctrl-O (expand
// tool output, summaries and the header), Ctrl-T (thinking), another
// session, a move in /tree — the screen and the scrollback are cleared and
// the whole transcript is printed again. What is printed is rendered one
// column short of the terminal's width: bubbletea erases the rest of each
// line it prints, and on a terminal that keeps the cursor in the last
// column after a full line (xterm's pending wrap) that erases the line's
// last character.
//
// The footer stays on the last row. The renderer inserts a print above the
// frame that is on the screen, so a print that takes items out of the live
// area, or follows a print that cleared the screen, waits until the frame
// without them has been written (drawClock; printWait where a test harness
// owns the output), and is cut to the room above that frame; and once the
// screen is full the live area never shrinks (the scrollback cannot come
// back down): rows it gives up are kept blank above the editor until
// printed text takes them.
// Nothing is drawn before the terminal's size is known.
//
// # Decisions
//
//   - A compaction made during the conversation adds its block
//     at the end of the transcript (after the messages it kept, which are
//     the last ones shown) and leaves what was printed before it in the
//     scrollback, where pi clears the screen; a transcript built from the
//     session (on resume, after /tree, another session) shows the latest
//     compaction's block first, then the messages it kept, then what
//     followed, as pi does on resume.
//   - The compaction block shows the user's /compact instructions (pi
//     does not), and, expanded, the receipt its entry records (for a
//     resumed session too, read from the entry: agent.ReceiptOf).
//   - /uncompact is drawn from the agent's CompactionUndone: the
//     transcript is built again from the new leaf, as after /tree, with a
//     warning when entries were left on the side branch or when the whole
//     history is past the threshold.
//   - The background summary has no event when it is done (the agent
//     reports it at its next check): while one is being written, the
//     footer asks the agent on each animation tick.
//   - Shift-P in /tree pins a message's text; pinned messages are marked
//     in the tree. Pins made with /pin show only in /pins (they are not
//     messages).
//   - Messages typed while a compaction or a navigation runs are held by the
//     UI and sent, in order, when it ends.
//   - The /tree selector's search matches every word typed; label times
//     (pi's Shift-T) are not shown.
//   - The session picker matches words too (no regular expressions), and
//     offers no sorting, renaming or deleting.
package tui
