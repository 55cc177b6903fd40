package agent

import (
	"github.com/prime-agent/prime/llm/registry"
	"github.com/prime-agent/prime/permission"
	"github.com/prime-agent/prime/settings"
)

// SecretsPolicy is the tools' environment policy the settings ask for:
// the default secret patterns, shellEnvironment.exclude and the variables
// the model registry reads keys from kept out of commands, unless
// shellEnvironment.include names them. reg may be nil.
func SecretsPolicy(p settings.PermissionSettings, reg *registry.Registry) permission.EnvPolicy {
	pol := permission.EnvPolicy{
		Exclude: permission.SplitList(p.EnvExclude),
		Include: permission.SplitList(p.EnvInclude),
		Inherit: p.EnvInherit,
	}
	if reg != nil {
		pol.Exclude = append(pol.Exclude, reg.KeyVariables()...)
	}
	return pol
}

// secretsPolicy is the policy for the user's own commands (!cmd, RPC bash).
func (a *Agent) secretsPolicy() permission.EnvPolicy {
	reg, err := a.conversationRegistry()
	if err != nil {
		reg = nil
	}
	return SecretsPolicy(a.settings().Permissions(), reg)
}
