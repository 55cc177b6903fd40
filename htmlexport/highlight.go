package htmlexport

import (
	"html"
	"strings"
)

// Code is highlighted by a small scanner of Prime's own: keywords,
// strings, comments and numbers of the languages a coding session shows
// most, each a CSS class. It runs only when a document is written (nothing
// is registered at start-up) and costs one pass over the code.

// langSyntax is what the scanner knows of a language.
type langSyntax struct {
	keywords     string // space-separated
	line         string // line comment opener ("" for none)
	block        bool   // /* */ comments
	hashComments bool   // # comments
	backticks    bool   // `raw strings`
}

// maxHighlight bounds the code the scanner colours; a longer block is shown
// plain.
const maxHighlight = 64 << 10

// syntaxOf returns the syntax of a fenced block's language, or false.
func syntaxOf(lang string) (langSyntax, bool) {
	switch strings.ToLower(lang) {
	case "go", "golang":
		return langSyntax{keywords: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota", line: "//", block: true, backticks: true}, true
	case "js", "javascript", "jsx", "ts", "typescript", "tsx", "mjs":
		return langSyntax{keywords: "async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return super switch this throw try typeof var void while yield null undefined true false interface type enum implements", line: "//", block: true, backticks: true}, true
	case "py", "python":
		return langSyntax{keywords: "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self", hashComments: true}, true
	case "rs", "rust":
		return langSyntax{keywords: "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while", line: "//", block: true}, true
	case "c", "h", "cpp", "c++", "cc", "hpp", "java", "cs", "csharp", "kotlin", "kt", "swift":
		return langSyntax{keywords: "auto break case char class const continue default do double else enum extern final float for goto if import include int long namespace new nullptr null package private protected public return short signed sizeof static struct switch template this throw try typedef union unsigned using var val void volatile while true false fun let func", line: "//", block: true}, true
	case "sh", "bash", "shell", "zsh", "console":
		return langSyntax{keywords: "if then else elif fi for while until do done case esac in function return export local set unset echo cd exit", hashComments: true}, true
	case "json", "jsonc":
		return langSyntax{keywords: "true false null", line: "//"}, true
	case "yaml", "yml", "toml":
		return langSyntax{keywords: "true false null yes no", hashComments: true}, true
	case "sql":
		return langSyntax{keywords: "select from where and or not insert into values update set delete create table index drop alter join left right inner outer on group by order limit as null is in like primary key", line: "--"}, true
	}
	return langSyntax{}, false
}

// highlight returns code as HTML: escaped, with spans for the tokens the
// language's syntax names; plain escaped text for a language it does not
// know or code past maxHighlight. Diffs colour their added and removed
// lines.
func highlight(code, lang string) string {
	l := strings.ToLower(lang)
	if l == "diff" || l == "patch" {
		return highlightDiff(code)
	}
	syn, ok := syntaxOf(l)
	if !ok || len(code) > maxHighlight {
		return html.EscapeString(code)
	}
	keywords := map[string]bool{}
	for _, k := range strings.Fields(syn.keywords) {
		keywords[k] = true
		if l == "sql" {
			keywords[strings.ToUpper(k)] = true
		}
	}
	var b strings.Builder
	b.Grow(len(code) + len(code)/4)
	span := func(class, text string) {
		b.WriteString(`<span class="`)
		b.WriteString(class)
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(text))
		b.WriteString("</span>")
	}
	for i := 0; i < len(code); {
		c := code[i]
		rest := code[i:]
		switch {
		case syn.line != "" && strings.HasPrefix(rest, syn.line), syn.hashComments && c == '#':
			j := strings.IndexByte(rest, '\n')
			if j < 0 {
				j = len(rest)
			}
			span("hc", rest[:j])
			i += j
		case syn.block && strings.HasPrefix(rest, "/*"):
			j := strings.Index(rest[2:], "*/")
			if j < 0 {
				j = len(rest)
			} else {
				j += 4
			}
			span("hc", rest[:j])
			i += j
		case c == '"' || c == '\'' || (c == '`' && syn.backticks):
			j := stringEnd(rest, c)
			span("hs", rest[:j])
			i += j
		case c >= '0' && c <= '9':
			j := 1
			for j < len(rest) && (isWord(rest[j]) || rest[j] == '.') {
				j++
			}
			span("hn", rest[:j])
			i += j
		case isWord(c):
			j := 1
			for j < len(rest) && isWord(rest[j]) {
				j++
			}
			if keywords[rest[:j]] {
				span("hk", rest[:j])
			} else {
				b.WriteString(html.EscapeString(rest[:j]))
			}
			i += j
		default:
			j := 1
			for j < len(rest) && !isWord(rest[j]) && !strings.ContainsRune("\"'`#/-", rune(rest[j])) {
				j++
			}
			b.WriteString(html.EscapeString(rest[:j]))
			i += j
		}
	}
	return b.String()
}

// stringEnd returns the length of the string literal opening s with quote
// q: up to and including the closing quote, or the end of the line for one
// left open (a backtick string may span lines).
func stringEnd(s string, q byte) int {
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case '\n':
			if q != '`' {
				return j
			}
		case q:
			return j + 1
		}
	}
	return len(s)
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// highlightDiff colours a unified diff's lines.
func highlightDiff(code string) string {
	var b strings.Builder
	for line := range strings.SplitAfterSeq(code, "\n") {
		class := ""
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "@@"):
			class = "hm"
		case strings.HasPrefix(line, "+"):
			class = "ha"
		case strings.HasPrefix(line, "-"):
			class = "hr"
		}
		if class == "" {
			b.WriteString(html.EscapeString(line))
			continue
		}
		b.WriteString(`<span class="` + class + `">`)
		b.WriteString(html.EscapeString(line))
		b.WriteString("</span>")
	}
	return b.String()
}
