package agent

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/prime-agent/prime/settings"
)

// liveSettings is the settings the agent works with once a settings file
// changed under it: the files are looked at before each prompt and between
// the turns of a run (two stats), and a change (to the global or the
// project file) is read and applies from there, with a notice "settings
// reloaded". A switch the change flips (compaction.enabled, retry.enabled)
// is flipped for the session too, even one a front end had set.
type liveSettings struct {
	mu      sync.Mutex
	current *settings.Settings // nil: Config.Settings
	stamps  []fileStamp        // of the files when last read
}

// fileStamp is what tells a settings file changed.
type fileStamp struct {
	path string
	mod  time.Time
	size int64
	ok   bool
}

func stampsOf(st *settings.Settings) []fileStamp {
	var out []fileStamp
	for _, p := range []string{st.GlobalFile(), st.ProjectFile()} {
		if p == "" {
			continue
		}
		s := fileStamp{path: p}
		if fi, err := os.Stat(p); err == nil {
			s.mod, s.size, s.ok = fi.ModTime(), fi.Size(), true
		}
		out = append(out, s)
	}
	return out
}

func sameStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// watchSettings records the settings files' state when the agent starts
// working with them.
func (a *Agent) watchSettings() {
	a.live.mu.Lock()
	defer a.live.mu.Unlock()
	if a.live.stamps == nil && a.cfg.Settings != nil {
		a.live.stamps = stampsOf(a.cfg.Settings)
	}
}

// reloadSettings reads the settings again when a file changed since they
// were read, and says so.
func (a *Agent) reloadSettings(ctx context.Context) {
	if a.cfg.Settings == nil {
		return
	}
	a.watchSettings()
	a.live.mu.Lock()
	cur := a.live.current
	if cur == nil {
		cur = a.cfg.Settings
	}
	now := stampsOf(cur)
	if sameStamps(now, a.live.stamps) {
		a.live.mu.Unlock()
		return
	}
	fresh, err := cur.Reload(ctx)
	if err != nil {
		a.live.mu.Unlock()
		return
	}
	a.live.current, a.live.stamps = fresh, now
	a.live.mu.Unlock()
	a.flipSwitches(cur, fresh)
	text := "settings reloaded"
	for _, p := range fresh.Problems() {
		text += "; " + p.Error()
	}
	a.notice(NoticeInfo, text)
}

// flipSwitches sets the session's automatic compaction and retry to what
// the fresh settings say where they differ from the old ones: an edit of
// the file wins over an earlier SetAutoCompaction. Switches not yet taken
// from the settings are taken from the fresh ones when first needed.
func (a *Agent) flipSwitches(old, fresh *settings.Settings) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &a.conv
	if !c.flagsSet {
		return
	}
	model := ""
	if c.model != nil {
		model = c.model.Provider + "/" + c.model.ID
	}
	if was, now := old.Compaction(model).Enabled, fresh.Compaction(model).Enabled; was != now {
		c.autoCompact = now
	}
	if was, now := old.Retry().Enabled, fresh.Retry().Enabled; was != now {
		c.autoRetry = now
	}
}
