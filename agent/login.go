package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/registry"
)

// LoginProviders lists the providers whose key /login can store (see
// registry.Registry.KeyProviders).
func (a *Agent) LoginProviders() ([]registry.KeyProvider, error) {
	reg, err := a.conversationRegistry()
	if err != nil {
		return nil, err
	}
	return reg.KeyProviders(), nil
}

// Login stores key as provider's API key in the agent directory's
// auth.json (pi's file and format, mode 0600) and puts it to use at once:
// a conversation without a model chooses one as it would at start (now
// with the key), else the provider's newest; one talking to that provider
// goes on with the new key; one talking to another keeps its model, and
// the key serves /model. switched reports that the model was set.
// The key goes nowhere else: not into the session, an event or an error.
func (a *Agent) Login(ctx context.Context, provider, key string) (model llm.Model, switched bool, err error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return llm.Model{}, false, errors.New("no key given")
	}
	providers, err := a.LoginProviders()
	if err != nil {
		return llm.Model{}, false, err
	}
	if !slices.ContainsFunc(providers, func(p registry.KeyProvider) bool { return p.Name == provider }) {
		return llm.Model{}, false, fmt.Errorf("provider %q takes no key ('prime models' lists the providers)", provider)
	}
	dir := a.cfg.AgentDir
	if dir == "" {
		dir = a.settings().AgentDir()
	}
	if err := registry.SaveAPIKey(dir, provider, key); err != nil {
		return llm.Model{}, false, fmt.Errorf("cannot store the key: %w", err)
	}
	a.mu.Lock()
	var current string
	if m := a.conv.model; m != nil {
		current = m.Provider + "/" + m.ID
		if m.Provider != provider {
			a.mu.Unlock()
			return *m, false, nil
		}
	}
	a.mu.Unlock()
	if current == "" {
		// No model yet: the usual choice, which the key may now allow.
		if err := a.ensureModel(ctx); err == nil {
			a.mu.Lock()
			m, level := *a.conv.model, a.conv.thinking
			a.mu.Unlock()
			a.emit(ModelChanged{Model: m})
			a.emit(ThinkingLevelChanged{Level: level})
			return m, true, nil
		}
		reg, err := a.conversationRegistry()
		if err != nil {
			return llm.Model{}, false, err
		}
		for _, e := range reg.Models() {
			if e.Model.Provider == provider && e.Supported && e.HasKey {
				current = e.Ref()
				break
			}
		}
	}
	m, err := a.SetModel(ctx, current)
	return m, err == nil, err
}

// Logout removes provider's key from the agent directory's auth.json (a key
// from the environment or models.json stays where it is). A conversation
// talking to that provider stops using the removed key at once: it goes on
// with the key that remains, or, with none, chooses its model again at the
// next prompt, which then says what to set. removed is false when
// auth.json held no entry for the provider.
func (a *Agent) Logout(ctx context.Context, provider string) (removed bool, err error) {
	dir := a.cfg.AgentDir
	if dir == "" {
		dir = a.settings().AgentDir()
	}
	if removed, err = registry.RemoveAPIKey(dir, provider); err != nil {
		return false, fmt.Errorf("cannot remove the key: %w", err)
	}
	if !removed {
		return false, nil
	}
	a.mu.Lock()
	m := a.conv.model
	a.mu.Unlock()
	if m == nil || m.Provider != provider {
		return true, nil
	}
	reg, err := a.conversationRegistry()
	if err != nil {
		return true, err
	}
	p, fresh, perr := reg.ProviderFor(ctx, *m)
	a.mu.Lock()
	if a.conv.model == m { // not changed meanwhile
		if perr == nil {
			a.conv.model, a.conv.provider = &fresh, p
		} else {
			a.conv.model, a.conv.provider = nil, nil
		}
	}
	a.mu.Unlock()
	return true, nil
}
