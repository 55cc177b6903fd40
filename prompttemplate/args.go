package prompttemplate

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// SplitArgs splits a command's argument text as pi does, shell-like but
// forgiving: white space separates arguments; a ' or " opens a quoted
// argument only at an argument's start (so "doesn't" is one word), and
// inside it a backslash before that quote keeps the quote; a quote never
// closed is an ordinary character; "" is an empty argument.
func SplitArgs(s string) []string {
	var args []string
	var cur strings.Builder
	started := false
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case (c == '"' || c == '\'') && !started:
			started = true
			if end, text, ok := quoted(s, i); ok {
				cur.WriteString(text)
				i = end + 1
				continue
			}
			cur.WriteByte(s[i])
		case unicode.IsSpace(c):
			if started {
				args = append(args, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteString(s[i : i+size]) // the bytes as typed, even when not UTF-8
			started = true
		}
		i += size
	}
	if started {
		args = append(args, cur.String())
	}
	return args
}

// quoted reads the quoted text opening at s[open]: the index of its
// closing quote and its text, or ok false when the quote is never closed.
func quoted(s string, open int) (end int, text string, ok bool) {
	q := s[open]
	var b strings.Builder
	for i := open + 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		case s[i] == q:
			return i, b.String(), true
		default:
			b.WriteByte(s[i])
		}
	}
	return 0, "", false
}

var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{(\d+|ARGUMENTS|@):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(ARGUMENTS|@|\d+)`)
})

// Substitute fills body's placeholders with args, as pi does: $1, $2, …
// one argument ("" when missing); $@ and $ARGUMENTS all of them joined
// by spaces; ${N:-default}, ${@:-default} and ${ARGUMENTS:-default} the
// same with a default when empty; ${@:N} the arguments from the Nth on and
// ${@:N:L} L of them (N 0 counting as 1). Values are not substituted again.
func Substitute(body string, args []string) string {
	all := strings.Join(args, " ")
	arg := func(n string) string {
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 || i > len(args) {
			return ""
		}
		return args[i-1]
	}
	return placeholder().ReplaceAllStringFunc(body, func(m string) string {
		g := placeholder().FindStringSubmatch(m)
		switch {
		case g[1] != "":
			v := all
			if g[1] != "@" && g[1] != "ARGUMENTS" {
				v = arg(g[1])
			}
			if v == "" {
				return g[2]
			}
			return v
		case g[3] != "":
			start, err := strconv.Atoi(g[3])
			if start = max(start-1, 0); err != nil || start > len(args) {
				return ""
			}
			rest := args[start:]
			if g[4] != "" {
				if n, err := strconv.Atoi(g[4]); err == nil && n < len(rest) {
					rest = rest[:n]
				}
			}
			return strings.Join(rest, " ")
		case g[5] == "@" || g[5] == "ARGUMENTS":
			return all
		default:
			return arg(g[5])
		}
	})
}
