package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// misspelt returns the command a single bare word seems to be a misspelling
// of ("sesion" → "session"), or "" when it is not close to any: such a word
// is more likely a mistyped command than a one-word prompt for the model.
// Close means one edit (an insertion, deletion, substitution or swap of two
// neighbours) away, two for words of six letters or more. help (and login)
// count as commands.
func misspelt(cmds []*command, word string) string {
	if word == "" || !isWord(word) {
		return ""
	}
	names := []string{"help"}
	for _, c := range cmds {
		name, _, _ := strings.Cut(c.name, " ")
		names = append(names, name)
	}
	limit := 1
	if len(word) >= 6 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, n := range names {
		if n == word {
			return "" // a command; not a misspelling
		}
		if d := editDistance(word, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// isWord reports whether s is letters and hyphens only: not a flag, a path,
// an @file or a sentence.
func isWord(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '-' {
			return false
		}
	}
	return s[0] != '-'
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent letters.
func editDistance(a, b string) int {
	x, y := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// group returns the commands whose name starts with the word word
// ("session" → session info, session check, …), sorted by name, or nil when
// word is no group's: "prime session" alone, or with a word that is none of
// its commands, is a command line gone wrong, not a prompt, as "prime
// compact the file" runs compact.
func group(cmds []*command, word string) []*command {
	var out []*command
	for _, c := range cmds {
		if first, _, ok := strings.Cut(c.name, " "); ok && first == word {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// groupUsage answers "prime GROUP [WORD]" when WORD is missing, a request
// for help or none of the group's commands: the group's commands, and for a
// word close to one of them, that one. It returns the exit status: 0 for
// help (on stdout), 2 otherwise (on stderr).
func groupUsage(a *app, name string, members []*command, rest []string) int {
	w, code := a.stderr, exitBadUsage
	switch {
	case len(rest) > 0 && (rest[0] == "-h" || rest[0] == "--help" || rest[0] == "help"):
		w, code = a.stdout, exitOK
	case len(rest) > 0:
		near := ""
		for _, c := range members {
			sub := strings.TrimPrefix(c.name, name+" ")
			if d := editDistance(rest[0], sub); d <= 2 && (near == "" || d < editDistance(rest[0], near)) {
				near = sub
			}
		}
		msg := fmt.Sprintf("prime %s: %q is not one of its commands", name, rest[0])
		if near != "" {
			msg += fmt.Sprintf("; did you mean 'prime %s %s'?", name, near)
		}
		fmt.Fprintln(w, msg)
	default:
		fmt.Fprintf(w, "prime %s: name one of its commands\n", name)
	}
	if code != exitOK {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Usage: prime %s COMMAND [ARGS]\n\nCommands:\n", name)
	width := 0
	for _, c := range members {
		width = max(width, len(c.name))
	}
	for _, c := range members {
		fmt.Fprintf(w, "  prime %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun \"prime %s COMMAND --help\" for a command's arguments and flags.\n", name)
	return code
}
