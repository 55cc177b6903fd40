package htmlexport

import (
	"regexp"
	"strings"
	"testing"
)

var (
	imgSrc  = regexp.MustCompile(`<img[^>]*\ssrc="([^"]*)"`)
	badTags = regexp.MustCompile(`(?i)<(script|iframe|object|embed|style|link|meta|base|form|svg|math)[\s>/]`)
	handler = regexp.MustCompile(`(?i)<[a-z][^>]*\son[a-z]+\s*=`)
	href    = regexp.MustCompile(`(?i)href="\s*([^"]*)"`)
	// A data link to a raster image is no script (goldmark's rule, which
	// browsers share: the scheme and type are read in any case); any other
	// data link, an SVG's included, may be.
	rasterData = regexp.MustCompile(`(?i)^data:image/(png|gif|jpeg|webp)[;,]`)
	scriptLink = regexp.MustCompile(`(?i)^(javascript|vbscript|data):`)
)

// FuzzMarkdownSafe: whatever a message says, its HTML runs nothing and
// loads nothing: no script or embedding element, no event handler, no
// image but inline data, no script link.
func FuzzMarkdownSafe(f *testing.F) {
	for _, s := range []string{"# hi\n\n**bold** `code`", "<script>alert(1)</script>", "![x](http://evil/x.png)", "[a](javascript:alert(1))",
		"<img src=x onerror=alert(1)>", "```go\nfunc main() { \"s\" }\n```", "<div onclick=\"x\">a</div>", "![i](data:image/png;base64,AAAA)",
		"| a | b |\n|---|---|\n| 1 | 2 |", "~~del~~ <b>x</b>", "<svg onload=alert(1)>", "[x](  JaVaScRiPt:alert(1))", "[](data:text/html,<script>x</script>)", "[s](data:image/svg+xml;base64,AAAA)", "<javascript:alert(1)>", "<JAVASCRIPT:x>", "![i](vbscript:x)"} {
		f.Add(s)
	}
	md := newMarkdown()
	f.Fuzz(func(t *testing.T, text string) {
		out := md.render(text)
		if m := badTags.FindString(out); m != "" {
			t.Fatalf("%q renders a %q element:\n%s", text, m, out)
		}
		if m := handler.FindString(out); m != "" {
			t.Fatalf("%q renders an event handler %q:\n%s", text, m, out)
		}
		for _, m := range href.FindAllStringSubmatch(out, -1) {
			if scriptLink.MatchString(m[1]) && !rasterData.MatchString(m[1]) {
				t.Fatalf("%q renders a script link %q:\n%s", text, m[0], out)
			}
		}
		for _, m := range imgSrc.FindAllStringSubmatch(out, -1) {
			if !strings.HasPrefix(m[1], "data:image/") {
				t.Fatalf("%q renders an image from %q:\n%s", text, m[1], out)
			}
		}
	})
}

// FuzzHighlight: the highlighted code, its tags taken out and unescaped,
// is the code itself, and no tag but the highlighter's spans appears.
func FuzzHighlight(f *testing.F) {
	for _, c := range [][2]string{{"func f() { return \"x\" } // c", "go"}, {"x = 'a\\'b' # c", "py"}, {"/* open", "js"}, {"+a\n-b\n@@ x", "diff"},
		{"`raw\nstring`", "go"}, {"SELECT * FROM t -- c", "sql"}, {"<b>&amp;</b>", "html"}, {"é ☃ 0x1F", "rust"}} {
		f.Add(c[0], c[1])
	}
	span := regexp.MustCompile(`<span class="h[kscnarm]">|</span>`)
	f.Fuzz(func(t *testing.T, code, lang string) {
		out := highlight(code, lang)
		plain := span.ReplaceAllString(out, "")
		if strings.ContainsAny(plain, "<>") {
			t.Fatalf("highlight(%q, %q) holds markup of its own: %s", code, lang, out)
		}
		if got := unescape(plain); got != code {
			t.Fatalf("highlight(%q, %q) shows %q", code, lang, got)
		}
	})
}

func unescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
}

// FuzzRedact: masking is stable (a masked text masks to itself) and
// never adds text but the mask.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"API_KEY=sk-ant-0123456789abcdefghij", "password: hunter2hunter2", "https://u:p4ssw0rd!@h/x", "-----BEGIN PRIVATE KEY-----\nx",
		"Bearer abcdefghijklmnopqrstuvwxyz", "plain text with tokens: 12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := newRedactor(false)
		once := r.text(s)
		if twice := r.text(once); twice != once {
			t.Fatalf("masking %q again changes it: %q → %q", s, once, twice)
		}
		if strings.Count(once, mask) < strings.Count(s, mask) {
			t.Fatalf("masking %q lost a mask: %q", s, once)
		}
	})
}

// Links keep only addresses that run nothing when followed.
func TestSafeURL(t *testing.T) {
	for _, c := range []struct {
		url  string
		safe bool
	}{
		{"https://example.com/a?b#c", true}, {"HTTP://x", true}, {"mailto:a@b", true}, {"ftp://x", true},
		{"docs/a.md", true}, {"#top", true}, {"/abs/path", true}, {"a/b:c", true}, {"?q=x:y", true},
		{"data:image/png;base64,AAAA", true}, {"dAtA:imAge/png;", true}, {"data:image/webp,x", true},
		{"javascript:alert(1)", false}, {" \x01JaVaScRiPt:x", false}, {"java\tscript:x", false}, {"java\nscript:x", false},
		{"vbscript:x", false}, {"file:///etc/passwd", false}, {"data:text/html,<script>", false},
		{"data:image/svg+xml;base64,AAAA", false}, {"data:image/pngx", false}, {"blob:x", false},
	} {
		if got := safeURL([]byte(c.url)); got != c.safe {
			t.Errorf("safeURL(%q) = %v, want %v", c.url, got, c.safe)
		}
	}
	md := newMarkdown()
	for _, text := range []string{"<javascript:alert(1)>", "[a](data:image/svg+xml;base64,AAAA)", "![i](javascript:x)"} {
		if out := md.render(text); strings.Contains(strings.ToLower(out), `href="javascript`) || strings.Contains(out, `href="data:image/svg`) {
			t.Errorf("%q renders a live link: %s", text, out)
		}
	}
	if out := md.render("<https://example.com> and <a@b.org>"); !strings.Contains(out, `href="https://example.com"`) || !strings.Contains(out, `href="mailto:a@b.org"`) {
		t.Errorf("autolinks lost their addresses: %s", out)
	}
}
