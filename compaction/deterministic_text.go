package compaction

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prime-agent/prime/llm"
)

// Reading the user's words: rules, sentences, and items quoted or cut to a
// line.

// rulesIn returns the sentences of a user message that state a rule or
// preference (see rules.go), outside code blocks, without leading symbols
// (an emoji that closed the sentence before).
func rulesIn(text string) []string {
	var out []string
	for _, sent := range userSentences(text) {
		if english().classify(sent) == sentenceRule {
			out = append(out, "- "+sent)
		}
	}
	return out
}

// appendRules adds rules to list once each (compared without case and
// spacing); a rule stated again moves to the end, as the newest.
func appendRules(list, rules []string) []string {
	for _, r := range rules {
		k := ruleKey(r)
		for i, x := range list {
			if ruleKey(x) == k {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		list = append(list, r)
	}
	return list
}

func ruleKey(r string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.TrimPrefix(r, "- ")), " "))
}

// withoutCodeBlocks removes fenced code blocks (pasted logs, code).
func withoutCodeBlocks(text string) string {
	if !strings.Contains(text, "```") {
		return text
	}
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(text, "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "```") {
			// A closing fence with text after it ("```. Keep it small.")
			// keeps the text: people write on after pasting.
			if rest := strings.TrimLeft(trimmed, "`"); in && rest != "" {
				b.WriteString(rest)
			}
			in = !in
			b.WriteString("\n")
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// splitSentences splits text at line breaks and at sentence ends: ., ! or
// ? followed by space and a capital, a digit, a quote or a non-ASCII
// letter (so "go test ./... before" and "e.g. this" stay whole).
func splitSentences(text string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			emit(i)
			start = i + 1
		case c == '.' || c == '!' || c == '?':
			j := i + 1
			for j < len(text) && (text[j] == '.' || text[j] == '!' || text[j] == '?') {
				j++
			}
			k := j
			for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
				k++
			}
			if k == j && k < len(text) {
				i = j - 1
				continue
			}
			if k == len(text) || sentenceStart(text[k:]) || lowerStart(text[k:]) && wordEnd(text[:i]) {
				emit(j)
				start = k
			}
			i = k - 1
		}
	}
	emit(len(text))
	return out
}

// lowerStart reports a sentence that starts in lower case, as people
// type: a letter, then a letter or an apostrophe.
func lowerStart(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	if !unicode.IsLower(r) {
		return false
	}
	r2, _ := utf8.DecodeRuneInString(s[n:])
	return unicode.IsLetter(r2) || r2 == '\''
}

// wordEnd reports whether text ends with a word of two letters or more
// (hyphens inside it allowed: "off-limits") that stands alone (not "e.g",
// "./..", "v1.2") and is no abbreviation,
// so a full stop after it ends a sentence even before a lower-case word.
func wordEnd(text string) bool {
	if strings.HasSuffix(text, "\"") || strings.HasSuffix(text, "”") || strings.HasSuffix(text, ")") {
		return len(text) > 1 // a quote or an aside closed the sentence
	}
	i := len(text)
	for i > 0 && (asciiLetter(text[i-1]) || text[i-1] == '-' && i > 1 && asciiLetter(text[i-2]) && i < len(text)) {
		i--
	}
	if len(text)-i < 2 || i > 0 && text[i-1] != ' ' && text[i-1] != '\n' && text[i-1] != '\t' && text[i-1] != '(' {
		return false
	}
	switch strings.ToLower(text[i:]) {
	case "etc", "approx", "incl", "esp", "resp", "min", "max", "fig", "sec", "vol", "cca",
		"vs", "cf", "no", "nr", "st", "dr", "mr", "ms", "jr", "sr", "pp", "ca", "ex":
		return false
	}
	return true
}

func asciiLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func sentenceStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || strings.ContainsRune("\"'`(*[", r) || r >= 0x2E80
}

// oneLine folds text onto one line and bounds it to n units.
func oneLine(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if llm.UTF16Len(text) <= n {
		return text
	}
	p, _ := llm.UTF16Prefix(text, n)
	return p + "…"
}

// quoteBlock renders possibly multi-line text inside a list item: its
// first line continues the item's line, the others are indented under it
// (blank lines dropped, so the item reads back whole).
func quoteBlock(text string) string {
	text = strings.TrimSpace(text)
	if !strings.Contains(text, "\n") {
		return text
	}
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimRight(line, " \t\r"); strings.TrimSpace(line) != "" {
			if b.Len() > 0 {
				b.WriteString("\n" + quoteIndent)
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

// quoteIndent indents the continuation lines of an item.
const quoteIndent = "    "

// unquote undoes quoteBlock's indentation.
func unquote(item string) string { return strings.ReplaceAll(item, "\n"+quoteIndent, "\n") }

func appendUnique(list []string, item string) []string {
	for _, it := range list {
		if it == item {
			return list
		}
	}
	return append(list, item)
}
