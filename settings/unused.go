package settings

import (
	"fmt"

	"github.com/prime-agent/prime/internal/jsonedit"
)

// piOnlyKeys are pi 1.6's settings (its settings.md) that Prime does not
// act on: a pi user's settings.json copied over is read, and each of these
// it sets is named, so that none is ignored in silence.
var piOnlyKeys = map[string]bool{
	"autocompleteMaxVisible": true, "cacheWarming": true, "codemode": true, "collapseChangelog": true,
	"defaultProjectTrust": true, "defaultTools": true, "editorPaddingX": true, "enableAnalytics": true,
	"enableInstallTelemetry": true, "enableSkillCommands": true, "enabledModels": true, "extensions": true,
	"externalEditor": true, "fullscreenCopyOnSelect": true, "fullscreenExitOutput": true, "fullscreenScrollbar": true,
	"fullscreenWheelScrollLines": true, "httpIdleTimeoutMs": true, "httpProxy": true, "images": true,
	"markdown": true, "modelThinkingLevels": true, "npmCommand": true, "outputPad": true, "packages": true,
	"quietStartup": true, "selfUpdateCommand": true, "sessionDir": true, "sessionShareDestination": true,
	"shellCommandPrefix": true, "showCacheMissNotices": true, "showHardwareCursor": true, "terminal": true,
	"theme": true, "themes": true, "thinkingBudgets": true, "transport": true, "treeFilterMode": true,
	"tuiMode": true, "warnings": true, "websocketConnectTimeoutMs": true,
}

// quietKeys are keys a file may hold that need no word: a schema for
// editors, and what pi writes for itself.
var quietKeys = map[string]bool{"$schema": true, "lastChangelogVersion": true}

// readUnused notes the top-level keys of the file that Prime does not
// read, and the fields of its sections Prime does not know (pi's
// retry.provider, …): their values change nothing. They are not problems
// (the file is fine and other programs may read them); [Settings.Unused]
// lists them.
func (r *reader) readUnused() {
	root := r.doc.Root
	top := map[string]bool{hooksKey: true, trustedProjectsKey: true, permSection: true, SkillsKey: true, PromptsKey: true}
	fields := map[string]map[string]bool{"compaction": {"modelOverrides": true}}
	for i := range knownKeys {
		d := &knownKeys[i]
		sec := d.section()
		if sec == "" {
			top[d.name] = true
			continue
		}
		top[sec] = true
		if fields[sec] == nil {
			fields[sec] = map[string]bool{}
		}
		fields[sec][d.field()] = true
	}
	for _, m := range root.Members {
		switch {
		case quietKeys[m.Name]:
		case piOnlyKeys[m.Name]:
			r.note(m.Value, m.Name, "a setting of pi's that Prime does not use")
		case !top[m.Name]:
			r.note(m.Value, m.Name, "not a setting Prime knows ('prime settings' lists them)")
		case fields[m.Name] != nil && m.Value.Kind == '{' && m.Name != permSection:
			for _, f := range m.Value.Members {
				if !fields[m.Name][f.Name] {
					r.note(f.Value, m.Name+"."+f.Name, fmt.Sprintf("not a field of %s that Prime knows", m.Name))
				}
			}
		}
	}
}

func (r *reader) note(n *jsonedit.Node, key, msg string) {
	line, col := r.doc.Position(n.Start)
	r.l.unused = append(r.l.unused, Problem{Scope: r.l.scope, File: r.l.file, Line: line, Column: col, Key: key, Msg: msg})
}

// Unused lists the keys the settings files set that Prime does not read
// (pi's settings for what Prime does not do, misspelt keys), global first,
// each with its file, line and column: their values have no effect. A
// project file's are listed whether or not it is trusted.
func (s *Settings) Unused() []Problem {
	s = s.get()
	var out []Problem
	for _, l := range []*layer{s.global, s.project} {
		if l != nil {
			out = append(out, l.unused...)
		}
	}
	return out
}
