package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/prime-agent/prime/llm/registry"
)

func loginCommands() []*command {
	return []*command{{name: "login", usage: "[PROVIDER]",
		summary: "store a provider's API key in the agent directory's auth.json (typed without echo, or one line of standard input)", run: runLogin},
		{name: "logout", usage: "PROVIDER", summary: "remove a provider's API key from the agent directory's auth.json", run: runLogout}}
}

// runLogout is prime logout PROVIDER: the provider's entry leaves
// auth.json (its other entries stay). A provider with no entry is said,
// and is not an error.
func runLogout(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("logout", flag.ContinueOnError)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	dir, err := registry.DefaultAgentDir(a.getenv)
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "auth.json")
	if len(rest) != 1 {
		var stored []string
		if reg, err := registry.Load(registry.Options{AgentDir: dir, Getenv: a.getenv}); err == nil {
			for _, p := range reg.KeyProviders() {
				if p.Key == registry.SourceAuthJSON {
					stored = append(stored, p.Name)
				}
			}
		}
		if len(stored) == 0 {
			return usageErrorf("name the provider whose key to remove (%s stores none)", file)
		}
		return usageErrorf("name the provider whose key to remove: %s", strings.Join(stored, ", "))
	}
	removed, err := registry.RemoveAPIKey(dir, rest[0])
	if err != nil {
		return fmt.Errorf("cannot remove the key: %w", err)
	}
	if !removed {
		fmt.Fprintf(a.stdout, "no key for %s in %s; nothing removed\n", rest[0], file)
		return nil
	}
	fmt.Fprintf(a.stdout, "removed the key for %s from %s\n", rest[0], file)
	return nil
}

// runLogin is prime login: the key is read from the terminal without being
// shown, or as the first line of standard input when it is not a terminal
// (echo "$KEY" | prime login anthropic), and stored in auth.json with mode
// 0600. It is never printed.
func runLogin(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usageErrorf("unexpected argument %q", rest[1])
	}
	dir, err := registry.DefaultAgentDir(a.getenv)
	if err != nil {
		return err
	}
	reg, err := registry.Load(registry.Options{AgentDir: dir, Getenv: a.getenv})
	if err != nil {
		return badInput(err)
	}
	providers := reg.KeyProviders()
	var names []string
	for _, p := range providers {
		names = append(names, p.Name)
	}
	in := bufio.NewReader(a.stdin)
	tty := isTerminal(a.stdin)
	provider := ""
	if len(rest) == 1 {
		provider = rest[0]
	} else if tty {
		fmt.Fprintf(a.stderr, "Provider (%s): ", strings.Join(names, ", "))
		line, _ := in.ReadString('\n')
		provider = strings.TrimSpace(line)
	}
	if !slices.Contains(names, provider) {
		return usageErrorf("name the provider whose key to store: %s", strings.Join(names, ", "))
	}
	var key string
	if tty {
		fmt.Fprintf(a.stderr, "API key for %s (not shown): ", provider)
		b, err := term.ReadPassword(a.stdin.(*os.File).Fd())
		fmt.Fprintln(a.stderr)
		if err != nil {
			return fmt.Errorf("cannot read the key: %w", err)
		}
		key = string(b)
	} else {
		line, _ := in.ReadString('\n')
		key = line
	}
	if key = strings.TrimSpace(key); key == "" {
		return usageErrorf("no key given; nothing stored")
	}
	if err := registry.SaveAPIKey(dir, provider, key); err != nil {
		return fmt.Errorf("cannot store the key: %w", err)
	}
	fmt.Fprintf(a.stdout, "stored the key for %s in %s (mode 0600)\n", provider, filepath.Join(dir, "auth.json"))
	return nil
}
