package agent

import (
	"context"
	"fmt"

	"github.com/prime-agent/prime/compaction"
	"github.com/prime-agent/prime/session"
)

// BreakdownRequest says which context to measure, against which window.
type BreakdownRequest struct {
	// LeafID is where the context ends; empty means the current leaf.
	LeafID string
	// ContextWindow, when positive, replaces the model's window.
	ContextWindow int
}

// ContextBreakdown is what fills a context (/context, RPC's
// get_session_stats, "prime session context --breakdown"): every kind's
// tokens, the window with the threshold and the background mark, and what a
// compaction now would summarize and keep (see compaction.Breakdown).
type ContextBreakdown struct {
	compaction.ContextBreakdown `json:",inline"`
	// LeafID is the leaf measured.
	LeafID string `json:"leafId"`
	// WindowSource says where Window came from: SourceRequest, the
	// conversation's model (SourceModel), the session's model
	// (SourceSession), or SourceDefault when the model is unknown.
	WindowSource string `json:"windowSource"`
}

// ContextBreakdown measures the context at a leaf. The window is the
// request's, else the model the agent converses with, else the session's
// last model (from the registry), else compaction.DefaultContextWindow; the
// settings are those for that model.
func (a *Agent) ContextBreakdown(ctx context.Context, req BreakdownRequest) (*ContextBreakdown, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	leaf := req.LeafID
	if leaf == "" {
		leaf = a.s.LeafID()
	} else if a.s.Entry(leaf) == nil {
		a.mu.Unlock()
		return nil, fmt.Errorf("leaf %s: %w", leaf, session.ErrNotFound)
	}
	var path []*session.Entry
	if leaf != "" {
		path = a.s.Path(leaf)
	}
	model := a.conv.model
	a.mu.Unlock()
	sctx, err := session.BuildContext(path)
	if err != nil {
		return nil, err
	}
	out := &ContextBreakdown{LeafID: leaf}
	modelKey := ""
	switch {
	case req.ContextWindow > 0:
		out.Window, out.WindowSource = req.ContextWindow, SourceRequest
	case model != nil && model.ContextWindow > 0:
		out.Window, out.WindowSource = model.ContextWindow, SourceModel
		modelKey = model.Provider + "/" + model.ID
	default:
		reg, regErr := a.models(OpCompaction)
		_, win := a.chooseSummarizer(reg, regErr, SummarizerChoice{Offline: true}, sctx.Model)
		out.Window, out.WindowSource = win.tokens, win.source
	}
	if m := sctx.Model; modelKey == "" && m != nil && m.Provider != "" && m.ModelID != "" {
		modelKey = m.Provider + "/" + m.ModelID
	}
	cs := a.settings().Compaction(modelKey)
	pct := 0
	if bg := a.settings().Background(); bg.Enabled {
		pct = bg.Percent
	}
	// The cut previewed is the one /compact would make now.
	b, err := compaction.Breakdown(path, compaction.Settings{Enabled: cs.Enabled, ReserveTokens: cs.ReserveTokens, KeepRecentTokens: cs.KeepRecentTokens, Manual: true}, out.Window, pct)
	if err != nil {
		return nil, err
	}
	out.ContextBreakdown = *b
	return out, nil
}
