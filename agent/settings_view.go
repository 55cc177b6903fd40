package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/prime-agent/prime/settings"
)

// ErrNoSettingsFile means the agent's settings were not loaded from files,
// so a setting has nowhere to be saved.
var ErrNoSettingsFile = errors.New("no settings file to save to")

// Preferences are the settings a front end reads, as the agent has them
// now: a snapshot.
type Preferences struct {
	// HideThinkingBlock folds the model's thinking.
	HideThinkingBlock bool
	// DoubleEscapeAction is what Escape twice on an empty editor opens:
	// "tree", "fork" or "none".
	DoubleEscapeAction string
	// SkipBranchSummaryPrompt navigates the tree without asking whether to
	// summarize the branch left.
	SkipBranchSummaryPrompt bool
	// ReserveTokens and KeepRecentTokens are compaction's, for no model in
	// particular.
	ReserveTokens, KeepRecentTokens int
	// Background and BackgroundPercent are the background summary's switch
	// and threshold.
	Background        bool
	BackgroundPercent int
	// SummaryModel is compaction.model, "" for the session's model.
	SummaryModel string
	// GlobalFile is the global settings file, where SaveSetting writes; ""
	// when the settings were not loaded from files.
	GlobalFile string
	// AgentDir is the agent directory (models.json, auth.json, sessions).
	AgentDir string
}

// Preferences returns the settings as the agent works with them now.
func (a *Agent) Preferences() Preferences {
	st := a.settings()
	ui, bg, cs := st.Interface(), st.Background(), st.Compaction("")
	return Preferences{
		HideThinkingBlock: ui.HideThinkingBlock, DoubleEscapeAction: ui.DoubleEscapeAction,
		SkipBranchSummaryPrompt: st.BranchSummary().SkipPrompt,
		ReserveTokens:           cs.ReserveTokens, KeepRecentTokens: cs.KeepRecentTokens,
		Background: bg.Enabled, BackgroundPercent: bg.Percent,
		SummaryModel: st.SummaryModel(), GlobalFile: st.GlobalFile(), AgentDir: st.AgentDir(),
	}
}

// SaveSetting writes key = value into the global settings file (pi's key
// names: "compaction.enabled", "steeringMode", …); value "" removes the key.
// The agent works with the new settings from then on. A value the settings
// refuse is an error and nothing is written; without a settings file the
// error wraps [ErrNoSettingsFile].
func (a *Agent) SaveSetting(ctx context.Context, key, value string) error {
	st := a.settings()
	if st.GlobalFile() == "" {
		return fmt.Errorf("%s: %w", key, ErrNoSettingsFile)
	}
	var next *settings.Settings
	var err error
	if value == "" {
		next, _, err = st.Unset(ctx, settings.Global, key)
	} else {
		next, err = st.Set(ctx, settings.Global, key, value)
	}
	if err != nil {
		return err
	}
	// The file's stamp is left as it was: the next prompt reads the file
	// again and says "settings reloaded", as for a change made elsewhere.
	a.live.mu.Lock()
	a.live.current = next
	a.live.mu.Unlock()
	return nil
}
