package markdown

import "strings"

// language is what highlighting knows of a programming language: its
// comments, its strings, its keywords and built-in types. It is a small
// lexer, not a parser: enough to tell code's parts apart at a glance, with
// nothing to load before a code block needs it.
type language struct {
	lineComments []string
	blockComment [2]string // start and end; empty when none
	quotes       string    // the characters that open a string on one line
	multiline    []string  // delimiters of strings that span lines
	keywords     map[string]bool
	types        map[string]bool
	keyStrings   bool // a string before ':' is a key (JSON)
	yamlKeys     bool // a word before ': ' at a line's start is a key
	variables    bool // $NAME is a variable (shell)
	diff         bool // lines are styled by their first character
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// languages returns the languages highlighted, by every name a fence may
// give them.
func languages() map[string]*language {
	cLike := func(kw, ty string) *language {
		return &language{lineComments: []string{"//"}, blockComment: [2]string{"/*", "*/"}, quotes: `"'`, keywords: set(kw), types: set(ty)}
	}
	goLang := cLike("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota",
		"bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable")
	goLang.multiline = []string{"`"}
	js := cLike("async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield true false null undefined as interface type enum implements namespace declare readonly private public protected abstract keyof satisfies",
		"string number boolean any unknown never object void bigint symbol Array Promise Map Set Record")
	js.multiline = []string{"`"}
	rust := cLike("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
		"bool char f32 f64 i8 i16 i32 i64 i128 isize str u8 u16 u32 u64 u128 usize String Vec Option Result Box Some None Ok Err")
	c := cLike("auto break case const continue default do else enum extern for goto if inline register return sizeof static struct switch typedef union volatile while class namespace template typename public private protected virtual override new delete using nullptr true false this",
		"void char short int long float double signed unsigned bool size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std string")
	java := cLike("abstract assert break case catch class continue default do else enum extends final finally for if implements import instanceof interface native new package private protected public return static super switch synchronized this throw throws try volatile while true false null var record fun val when object",
		"boolean byte char double float int long short void String Integer Object List Map")
	python := &language{lineComments: []string{"#"}, quotes: `"'`, multiline: []string{`"""`, `'''`},
		keywords: set("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case True False None self"),
		types:    set("int float str bool list dict set tuple bytes object type print len range isinstance Exception")}
	sh := &language{lineComments: []string{"#"}, quotes: `"'`, variables: true,
		keywords: set("if then else elif fi case esac for while until do done in function return local export readonly set unset shift exit break continue source alias"),
		types:    set("echo cd ls cat grep sed awk printf test read eval exec trap go git make npm sudo rm cp mv mkdir")}
	ruby := &language{lineComments: []string{"#"}, quotes: `"'`,
		keywords: set("alias and begin break case class def defined? do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require attr_reader attr_accessor"),
		types:    set("puts print Integer String Array Hash")}
	sql := &language{lineComments: []string{"--"}, blockComment: [2]string{"/*", "*/"}, quotes: `'"`,
		keywords: set("select from where and or not insert into values update set delete create table index drop alter add primary key foreign references join left right inner outer on group by order having limit offset as distinct union all null is in like between case when then else end begin commit rollback SELECT FROM WHERE AND OR NOT INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE INDEX DROP ALTER ADD PRIMARY KEY FOREIGN REFERENCES JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT OFFSET AS DISTINCT UNION ALL NULL IS IN LIKE BETWEEN CASE WHEN THEN ELSE END BEGIN COMMIT ROLLBACK"),
		types:    set("int integer text varchar char boolean real date timestamp INT INTEGER TEXT VARCHAR CHAR BOOLEAN REAL DATE TIMESTAMP")}
	json := &language{quotes: `"`, keyStrings: true, keywords: set("true false null")}
	yaml := &language{lineComments: []string{"#"}, quotes: `"'`, yamlKeys: true, keywords: set("true false null yes no on off ~")}
	toml := &language{lineComments: []string{"#"}, quotes: `"'`, yamlKeys: true, keywords: set("true false")}
	diff := &language{diff: true}
	return map[string]*language{
		"go": goLang, "golang": goLang,
		"js": js, "javascript": js, "jsx": js, "mjs": js, "cjs": js, "ts": js, "typescript": js, "tsx": js,
		"rust": rust, "rs": rust,
		"c": c, "h": c, "cpp": c, "c++": c, "cc": c, "hpp": c, "cxx": c, "objc": c, "cs": c, "csharp": c,
		"java": java, "kotlin": java, "kt": java, "scala": java, "swift": java,
		"python": python, "py": python, "python3": python,
		"sh": sh, "bash": sh, "shell": sh, "zsh": sh, "console": sh, "shellsession": sh,
		"ruby": ruby, "rb": ruby,
		"sql":  sql,
		"json": json, "jsonc": json, "json5": json,
		"yaml": yaml, "yml": yaml, "toml": toml, "ini": toml,
		"diff": diff, "patch": diff,
	}
}

// highlighter is the highlighting of one code block: the language and the
// comment or string a line left open.
type highlighter struct {
	lang *language
	open string // the delimiter that closes what is open, "" when none
	kind flags
}

// highlighter returns a highlighter for a fence's language; one the
// renderer does not know draws plain text. The languages are set up the
// first time a code block asks.
func (r *Renderer) highlighter(name string) *highlighter {
	if name == "" {
		return &highlighter{}
	}
	if r.langs == nil {
		r.langs = languages()
	}
	return &highlighter{lang: r.langs[strings.ToLower(name)]}
}

// line returns one line of code as styled runs.
func (h *highlighter) line(s string) []seg {
	l := h.lang
	if l == nil {
		return []seg{{text: s}}
	}
	if l.diff {
		switch {
		case strings.HasPrefix(s, "+++"), strings.HasPrefix(s, "---"):
			return []seg{{text: s, f: fBold}}
		case strings.HasPrefix(s, "+"):
			return []seg{{text: s, f: fAdded}}
		case strings.HasPrefix(s, "-"):
			return []seg{{text: s, f: fRemoved}}
		case strings.HasPrefix(s, "@@"):
			return []seg{{text: s, f: fHunk}}
		}
		return []seg{{text: s}}
	}
	var out []seg
	emit := func(text string, f flags) {
		if text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].f == f {
			out[n-1].text += text
			return
		}
		out = append(out, seg{text: text, f: f})
	}
	i := 0
	if h.open != "" {
		end := strings.Index(s, h.open)
		if end < 0 {
			return []seg{{text: s, f: h.kind}}
		}
		end += len(h.open)
		emit(s[:end], h.kind)
		i, h.open = end, ""
	}
	if l.yamlKeys {
		i = h.yamlKey(s, i, emit)
	}
	for i < len(s) {
		n, f := h.token(s, i)
		emit(s[i:i+n], f)
		i += n
	}
	return out
}

// yamlKey styles the key of a "key: value" line.
func (h *highlighter) yamlKey(s string, i int, emit func(string, flags)) int {
	j := i
	for j < len(s) && (s[j] == ' ' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && (isIdent(s[k]) || s[k] == '.' || s[k] == '-' || s[k] == '[' || s[k] == ']') {
		k++
	}
	if k > j && (k == len(s) || s[k] == ':' || s[k] == '=' || (s[k] == ' ' && strings.HasPrefix(strings.TrimLeft(s[k:], " "), "="))) {
		emit(s[i:j], 0)
		emit(s[j:k], fKeyword)
		return k
	}
	return i
}

// token returns the length and style of the token at s[i:].
func (h *highlighter) token(s string, i int) (int, flags) {
	l := h.lang
	rest := s[i:]
	for _, p := range l.lineComments {
		if strings.HasPrefix(rest, p) && (p != "#" || i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return len(rest), fComment
		}
	}
	if b := l.blockComment; b[0] != "" && strings.HasPrefix(rest, b[0]) {
		if end := strings.Index(rest[len(b[0]):], b[1]); end >= 0 {
			return len(b[0]) + end + len(b[1]), fComment
		}
		h.open, h.kind = b[1], fComment
		return len(rest), fComment
	}
	for _, d := range l.multiline {
		if strings.HasPrefix(rest, d) {
			if end := strings.Index(rest[len(d):], d); end >= 0 {
				return len(d) + end + len(d), fString
			}
			h.open, h.kind = d, fString
			return len(rest), fString
		}
	}
	ch := rest[0]
	switch {
	case strings.IndexByte(l.quotes, ch) >= 0:
		n := quoted(rest)
		if l.keyStrings && strings.HasPrefix(strings.TrimLeft(rest[n:], " "), ":") {
			return n, fType
		}
		return n, fString
	case ch >= '0' && ch <= '9' && (i == 0 || !isIdent(s[i-1])):
		n := 1
		for n < len(rest) && (isIdent(rest[n]) || rest[n] == '.') {
			n++
		}
		return n, fNumber
	case l.variables && ch == '$':
		n := 1
		for n < len(rest) && (isIdent(rest[n]) || rest[n] == '{' || rest[n] == '}') {
			n++
		}
		return n, fType
	case isIdent(ch):
		n := 1
		for n < len(rest) && isIdent(rest[n]) {
			n++
		}
		w := rest[:n]
		switch {
		case l.keywords[w]:
			return n, fKeyword
		case l.types[w]:
			return n, fType
		}
		return n, 0
	}
	return 1, 0
}

// quoted is the length of the string at the start of s, to its closing
// quote or the line's end.
func quoted(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i + 1
		}
	}
	return len(s)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
