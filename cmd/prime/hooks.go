package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/settings"
)

// printSkipped tells the user, before an operation starts, which command
// hooks for its events (or for events Prime does not emit) will not run and
// why: one line per settings file and reason, such as
//
//	prime compact: skipped 2 hooks from /repo/.prime/agent/settings.json: project not trusted (run 'prime trust /repo')
func printSkipped(a *app, name string, st *settings.Settings, r *hook.Runner, events []string) {
	type group struct {
		file string
		skip hook.SkipReason
	}
	var order []group
	count := map[group]int{}
	for _, rep := range r.Skipped() {
		switch {
		case rep.Skip == hook.SkipUnknownEvent || rep.Skip == hook.SkipUnsafeFile:
			fmt.Fprintf(a.stderr, "prime %s: warning: %v\n", name, rep)
		case slices.Contains(events, rep.Event):
			g := group{rep.Source.File, rep.Skip}
			if count[g] == 0 {
				order = append(order, g)
			}
			count[g]++
		}
	}
	for _, g := range order {
		why := "hooks are disabled (--no-hooks)"
		if g.skip == hook.SkipUntrusted {
			why = fmt.Sprintf("project not trusted (run 'prime trust %s')", st.ProjectDir())
		}
		fmt.Fprintf(a.stderr, "prime %s: skipped %s from %s: %s\n", name, plural(count[g], "hook"), g.file, why)
	}
}

// describeHooks says, for a dry run, which hooks a real run would call.
func describeHooks(r *hook.Runner, events []string) string {
	var parts []string
	for _, ev := range events {
		if names := r.Handlers(ev); len(names) > 0 {
			parts = append(parts, ev+": "+hookNames(names))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return "not run in a dry run; a real run calls " + strings.Join(parts, "; ")
}

// hookNames lists hooks by name, quoted.
func hookNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// plural is "1 hook", "2 hooks".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
