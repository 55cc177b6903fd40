package main

import (
	"strings"
	"testing"
)

// TestSubcommandHelpListsEveryFlag: for every subcommand, each flag its
// Usage line offers is described under Flags, so that "prime X --help"
// tells a user about every flag X accepts (flags parsed outside the flag
// set, like dev bench's --cold once was, went missing there).
func TestSubcommandHelpListsEveryFlag(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "PRIME_CODING_AGENT_DIR": home + "/agent"}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runPrime(t, env, append(strings.Fields(c.name), "--help")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			usage, flags, _ := strings.Cut(out, "\nFlags:\n")
			usage, _, _ = strings.Cut(usage, "\n")
			listed := map[string]bool{}
			for _, l := range strings.Split(flags, "\n") {
				if f, ok := strings.CutPrefix(l, "  -"); ok {
					listed["-"+strings.Fields(f)[0]] = true
				}
			}
			for _, m := range readmeFlag.FindAllStringSubmatch(usage, -1) {
				if m[1] == "-h" || m[1] == "--help" {
					continue
				}
				if !listed[m[1]] {
					t.Errorf("%s is in the usage line but not under Flags:\n%s", m[1], out)
				}
			}
		})
	}
}
