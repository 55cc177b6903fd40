package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
)

// runValueCommands returns cfg with its "!command" env and header values
// replaced by their commands' output (trimmed), as pi resolves them. The
// commands run with sh in Prime's environment, bounded by ctx (the
// connection's timeout). Neither a command's output nor its text is put in
// an error: either may be the secret.
func runValueCommands(ctx context.Context, cfg Server) (Server, error) {
	if len(cfg.EnvCommands) == 0 && len(cfg.HeaderCommands) == 0 {
		return cfg, nil
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.EnvCommands)) {
		v, err := runValueCommand(ctx, cfg.EnvCommands[k])
		if err != nil {
			return cfg, fmt.Errorf("env %s: %w", k, err)
		}
		cfg.Env = append(slices.Clip(cfg.Env), k+"="+v)
	}
	if len(cfg.HeaderCommands) > 0 {
		headers := maps.Clone(cfg.Headers)
		if headers == nil {
			headers = map[string]string{}
		}
		for _, k := range slices.Sorted(maps.Keys(cfg.HeaderCommands)) {
			v, err := runValueCommand(ctx, cfg.HeaderCommands[k])
			if err != nil {
				return cfg, fmt.Errorf("header %s: %w", k, err)
			}
			headers[k] = v
		}
		cfg.Headers = headers
	}
	return cfg, nil
}

func runValueCommand(ctx context.Context, command string) (string, error) {
	out, err := exec.CommandContext(ctx, "sh", "-c", command).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("its command failed (%s)", ee.ProcessState)
		}
		return "", fmt.Errorf("its command could not run: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
