// Package agentdir finds Prime's agent directory, where the settings, the
// models, the keys and the sessions live: $PRIME_CODING_AGENT_DIR (a
// leading ~ is the home directory), else ~/.prime/agent.
//
//	dir, err := agentdir.Find(os.Getenv)
package agentdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Env is the environment variable that moves the agent directory (pi's is
// PI_CODING_AGENT_DIR).
const Env = "PRIME_CODING_AGENT_DIR"

// Find returns the agent directory, absolute. getenv reads the environment
// (nil: os.Getenv); the home directory is $HOME, or the system's idea of
// it when HOME is unset.
func Find(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	home := func() (string, error) {
		if h := getenv("HOME"); h != "" {
			return h, nil
		}
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the agent directory (set HOME or %s): %w", Env, err)
		}
		return h, nil
	}
	if dir := getenv(Env); dir != "" {
		if dir == "~" || strings.HasPrefix(dir, "~/") {
			h, err := home()
			if err != nil {
				return "", err
			}
			dir = filepath.Join(h, dir[1:])
		}
		return filepath.Abs(dir)
	}
	h, err := home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, ".prime", "agent"), nil
}
