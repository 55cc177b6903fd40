package htmlexport

import (
	"bytes"
	"html"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	grenderer "github.com/yuin/goldmark/renderer"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/prime-agent/prime/internal/mdguard"
)

// markdown renders message text to HTML. What a model or a user writes is
// shown, never obeyed: raw HTML appears as the text it is, an image with a
// remote address as a link (the page loads nothing from the network), and
// dangerous link schemes lose their address.
type markdown struct {
	md goldmark.Markdown
	// buf is reused between documents.
	buf bytes.Buffer
}

func newMarkdown() *markdown {
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM, mdguard.Extension{}),
		goldmark.WithRendererOptions(
			ghtml.WithHardWraps(),
			grenderer.WithNodeRenderers(util.Prioritized(safeNodes{}, 100)),
		),
	)
	return &markdown{md: md}
}

// render returns text as HTML; a text goldmark cannot render is shown as
// preformatted text.
func (m *markdown) render(text string) string {
	m.buf.Reset()
	if err := m.md.Convert([]byte(text), &m.buf); err != nil {
		return "<pre>" + html.EscapeString(text) + "</pre>"
	}
	return m.buf.String()
}

// safeNodes renders the nodes the default renderer would either drop or
// load from the network, and code blocks with highlighting.
type safeNodes struct{}

// RegisterFuncs registers the renderers of raw HTML, images and code.
func (safeNodes) RegisterFuncs(r grenderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindHTMLBlock, renderHTMLBlock)
	r.Register(ast.KindRawHTML, renderRawHTML)
	r.Register(ast.KindImage, renderImage)
	r.Register(ast.KindLink, renderLink)
	r.Register(ast.KindAutoLink, renderAutoLink)
	r.Register(ast.KindFencedCodeBlock, renderCode)
	r.Register(ast.KindCodeBlock, renderCode)
}

func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if !entering {
		return ast.WalkContinue, nil
	}
	var b strings.Builder
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		b.Write(seg.Value(source))
	}
	if n.HasClosure() {
		b.Write(n.ClosureLine.Value(source))
	}
	_, _ = w.WriteString("<p>" + strings.ReplaceAll(html.EscapeString(strings.TrimRight(b.String(), "\n")), "\n", "<br>\n") + "</p>\n")
	return ast.WalkContinue, nil
}

func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
	}
	return ast.WalkSkipChildren, nil
}

// renderLink renders a link whose address keeps to safeURL; another
// loses its address (goldmark's own check lets data:image/svg+xml by).
func renderLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="` + linkHref(n.Destination) + `"`)
	if n.Title != nil {
		_, _ = w.WriteString(` title="` + html.EscapeString(string(n.Title)) + `"`)
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

// renderAutoLink renders <scheme:...> and bare addresses as renderLink
// does; goldmark's renderer checks no scheme there, so that
// <javascript:alert(1)> was a link that ran a script (the page allows
// inline scripts: its own).
func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.AutoLink)
	if !entering {
		return ast.WalkContinue, nil
	}
	url := n.URL(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	_, _ = w.WriteString(`<a href="` + linkHref(url) + `">` + html.EscapeString(string(n.Label(source))) + `</a>`)
	return ast.WalkContinue, nil
}

// linkHref is dest escaped for an href, or nothing when it is not safeURL.
func linkHref(dest []byte) string {
	if !safeURL(dest) {
		return ""
	}
	return html.EscapeString(string(util.URLEscape(dest, true)))
}

// safeURL reports whether following dest runs nothing: an address without
// a scheme (relative, an anchor), one of the schemes that only fetch or
// mail, or inline raster image data. The scheme is read as a browser reads
// it: tabs and newlines dropped, leading controls and spaces trimmed, any
// case.
func safeURL(dest []byte) bool {
	u := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, string(dest))
	u = strings.ToLower(strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	colon := strings.IndexByte(u, ':')
	if colon < 0 || strings.ContainsAny(u[:colon], "/?#") {
		return true // no scheme
	}
	switch scheme := u[:colon]; scheme {
	case "http", "https", "mailto", "ftp":
		return true
	case "data":
		for _, t := range []string{"png", "gif", "jpeg", "webp"} {
			if strings.HasPrefix(u, "data:image/"+t+";") || strings.HasPrefix(u, "data:image/"+t+",") {
				return true
			}
		}
	}
	return false
}

// renderImage shows a markdown image as a link to it (an inline data
// image as itself).
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	dest := string(n.Destination)
	alt := html.EscapeString(plainText(n, source))
	if strings.HasPrefix(dest, "data:image/") && !ghtml.IsDangerousURL(n.Destination) {
		_, _ = w.WriteString(`<img src="` + html.EscapeString(dest) + `" alt="` + alt + `">`)
		return ast.WalkSkipChildren, nil
	}
	if alt == "" {
		alt = "image"
	}
	_, _ = w.WriteString(`<a class="imglink" href="` + linkHref(n.Destination) + `">[` + alt + `]</a>`)
	return ast.WalkSkipChildren, nil
}

func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(source))
		} else {
			b.WriteString(plainText(c, source))
		}
	}
	return b.String()
}

func renderCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	lang := ""
	if f, ok := node.(*ast.FencedCodeBlock); ok {
		lang = string(f.Language(source))
	}
	var b strings.Builder
	for i := range node.Lines().Len() {
		seg := node.Lines().At(i)
		b.Write(seg.Value(source))
	}
	_, _ = w.WriteString(`<pre class="code"`)
	if lang != "" {
		_, _ = w.WriteString(` data-lang="` + html.EscapeString(lang) + `"`)
	}
	_, _ = w.WriteString("><code>" + highlight(b.String(), lang) + "</code></pre>\n")
	return ast.WalkContinue, nil
}
