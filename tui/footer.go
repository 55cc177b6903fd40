package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/internal/smallfile"
	"github.com/prime-agent/prime/llm"
)

// footer is what the two lines under the editor show: where the session
// is, what it has cost, how full the context is, and the model.
type footer struct {
	cwd, home, branch, name string
	stats                   agent.Stats
	usage                   agent.ContextUsage
	auto                    bool
	model                   *llm.Model
	thinking                llm.ThinkingLevel
	// background is what the summary written ahead of the threshold is
	// doing.
	background agent.BackgroundStatus
	// permission is the permission mode's word ("sandbox", "ask"), ""
	// for none shown.
	permission string
}

// backgroundText is the footer's note on the background summary: being
// written (with the spinner's frame), ready for the threshold, or nothing.
func (f *footer) backgroundText(v *view) string {
	switch {
	case f.background.Writing:
		return v.st.accent.Render(spinnerFrames[v.frame%len(spinnerFrames)]) + v.st.muted.Render(" summarizing ahead")
	case f.background.Ready:
		return v.st.success.Render("✓") + v.st.muted.Render(" summary ready")
	}
	return ""
}

// meter is the context meter: "12.3%/200k", "?/200k" when the size is not
// known (after a compaction, until a reply measures it), then " (auto)"
// when automatic compaction is on.
func (f *footer) meter() string {
	window := "?"
	if f.usage.Window > 0 {
		window = tokenCount(f.usage.Window)
	}
	s := "?/" + window
	if f.usage.Known {
		s = fmt.Sprintf("%.1f%%/%s", f.usage.Percent, window)
	}
	if f.auto {
		s += " (auto)"
	}
	return s
}

// meterStyle colours the meter: warning above 70%, error above 90%.
func (f *footer) meterStyle(st *styles) lipgloss.Style {
	switch {
	case f.usage.Known && f.usage.Percent > 90:
		return st.errorText
	case f.usage.Known && f.usage.Percent > 70:
		return st.warning
	}
	return st.muted
}

func (f *footer) render(v *view) string {
	loc := f.cwd
	if f.home != "" && (loc == f.home || strings.HasPrefix(loc, f.home+string(filepath.Separator))) {
		loc = "~" + loc[len(f.home):]
	}
	if f.branch != "" {
		loc += " (" + f.branch + ")"
	}
	if f.name != "" {
		loc += " • " + f.name
	}
	if f.permission != "" {
		loc += " • " + f.permission
	}
	line1 := v.st.muted.Render(truncate(loc, v.width))

	var stats []string
	u := f.stats.Tokens
	if u.Input > 0 {
		stats = append(stats, "↑"+tokenCount(u.Input))
	}
	if u.Output > 0 {
		stats = append(stats, "↓"+tokenCount(u.Output))
	}
	if u.CacheRead > 0 {
		stats = append(stats, "R"+tokenCount(u.CacheRead))
	}
	if u.CacheWrite > 0 {
		stats = append(stats, "W"+tokenCount(u.CacheWrite))
	}
	if ch := cacheHit(f.stats.Last); ch != "" {
		stats = append(stats, ch)
	}
	if f.stats.Cost > 0 {
		stats = append(stats, fmt.Sprintf("$%.3f", f.stats.Cost))
	}
	left := v.st.muted.Render(strings.Join(stats, " "))
	if len(stats) > 0 {
		left += " "
	}
	left += f.meterStyle(v.st).Render(f.meter())
	if bg := f.backgroundText(v); bg != "" {
		left += " " + bg
	}

	right := "no model"
	if f.model != nil {
		right = f.model.ID
		if f.model.Reasoning {
			if f.thinking == "" || f.thinking == llm.ThinkingOff {
				right += " • thinking off"
			} else {
				right += " • " + string(f.thinking)
			}
		}
	}
	right = v.st.muted.Render(right)
	gap := v.width - lipgloss.Width(left) - lipgloss.Width(right)
	line2 := left
	if gap >= 2 {
		line2 += strings.Repeat(" ", gap) + right
	} else {
		line2 = truncate(left+"  "+right, v.width)
	}
	return line1 + "\n" + line2
}

// maxGitHead bounds what the footer reads of .git and HEAD: a cloned
// repository can make either a FIFO (Prime would wait for a writer
// before its first frame) or a link to /dev/zero (it would fill memory).
const maxGitHead = 4096

// gitBranch returns the branch checked out in the repository holding dir
// (read from .git/HEAD, the worktree's when .git is a file), the short
// commit for a detached head, or "" outside a repository.
func gitBranch(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		if err == nil {
			head := filepath.Join(p, "HEAD")
			if !fi.IsDir() {
				b, err := smallfile.Read(p, maxGitHead)
				if err != nil {
					return ""
				}
				g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return ""
				}
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				head = filepath.Join(g, "HEAD")
			}
			b, err := smallfile.Read(head, maxGitHead)
			if err != nil {
				return ""
			}
			h := strings.TrimSpace(string(b))
			if ref, ok := strings.CutPrefix(h, "ref: refs/heads/"); ok {
				return ref
			}
			if len(h) >= 7 {
				return h[:7]
			}
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// cacheHit is the latest reply's cache-hit share of its prompt (CH90.0%),
// or "" without cache activity.
func cacheHit(u llm.Usage) string {
	if u.CacheRead+u.CacheWrite == 0 {
		return ""
	}
	prompt := u.Input + u.CacheRead + u.CacheWrite
	return fmt.Sprintf("CH%.1f%%", 100*float64(u.CacheRead)/float64(prompt))
}
