package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/prime-agent/prime/session"
)

// sessionRepairCommands are "prime session check" and "prime session
// repair".
func sessionRepairCommands() []*command {
	return []*command{
		{name: "session check", usage: "FILE [--json]", summary: "read every entry as resuming would and list each problem (exit 1 when there is one)", run: runSessionCheck},
		{name: "session repair", usage: "FILE [--json]", summary: "rewrite FILE with bad fields written as pi reads them and unreadable lines dropped (keeps FILE.bak); says what it changed", run: runSessionRepair},
	}
}

// checkJSON is the output of "prime session check --json".
type checkJSON struct {
	File     string        `json:"file"`
	OK       bool          `json:"ok"`
	Problems []warningJSON `json:"problems"`
}

func runSessionCheck(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("session check", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	path, err := oneFile(fs, args)
	if err != nil {
		return err
	}
	ws, err := session.Check(path)
	if err != nil {
		return sessionFileErr(err)
	}
	out := checkJSON{File: path, OK: len(ws) == 0, Problems: toWarningsJSON(ws)}
	if *asJSON {
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
	} else {
		for _, w := range ws {
			fmt.Fprintf(a.stdout, "%s: %s\n", path, w)
		}
		if len(ws) == 0 {
			fmt.Fprintf(a.stdout, "%s: no problems\n", path)
		} else {
			fmt.Fprintf(a.stdout, "%s; prime session repair %s fixes what can be fixed\n", plural(len(ws), "problem"), path)
		}
	}
	if len(ws) > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s has %s", path, plural(len(ws), "problem"))}
	}
	return nil
}

func toWarningsJSON(ws []session.Warning) []warningJSON {
	out := []warningJSON{}
	for _, w := range ws {
		out = append(out, warningJSON{Line: w.Line, Kind: warningKinds[w.Kind], Message: w.Msg})
	}
	return out
}

// repairJSON is the output of "prime session repair --json".
type repairJSON struct {
	File    string        `json:"file"`
	Changed bool          `json:"changed"`
	Backup  string        `json:"backup,omitzero"`
	Fixes   []fixJSON     `json:"fixes"`
	Left    []warningJSON `json:"left"`
}

type fixJSON struct {
	Line int    `json:"line"`
	What string `json:"what"`
}

func runSessionRepair(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("session repair", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	path, err := oneFile(fs, args)
	if err != nil {
		return err
	}
	res, err := session.Repair(path)
	if err != nil {
		return sessionFileErr(err)
	}
	if *asJSON {
		out := repairJSON{File: path, Changed: len(res.Fixes) > 0, Backup: res.Backup, Fixes: []fixJSON{}, Left: toWarningsJSON(res.Left)}
		for _, f := range res.Fixes {
			out.Fixes = append(out.Fixes, fixJSON{f.Line, f.What})
		}
		return writeJSON(a.stdout, out)
	}
	for _, f := range res.Fixes {
		fmt.Fprintf(a.stdout, "%s: %s\n", path, f)
	}
	switch {
	case len(res.Fixes) == 0:
		fmt.Fprintf(a.stdout, "%s: nothing to repair\n", path)
	default:
		fmt.Fprintf(a.stdout, "repaired %s (%d changes); the original is %s\n", path, len(res.Fixes), res.Backup)
	}
	for _, w := range res.Left {
		fmt.Fprintf(a.stdout, "%s: left as it is: %s\n", path, w)
	}
	return nil
}
