package tool

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/internal/golden"
	"github.com/prime-agent/prime/llm"
)

func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.CWD, "small.txt", "one\ntwo\nthree\n")
	writeFile(t, env.CWD, "nofinal.txt", "one\ntwo")
	writeFile(t, env.CWD, "empty.txt", "")
	writeFile(t, env.CWD, "crlf.txt", "a\r\nb\r\n")
	writeFile(t, env.CWD, "long.txt", numberedLines(2500))
	writeFile(t, env.CWD, "wide.txt", strings.Repeat(strings.Repeat("w", 999)+"\n", 100))
	writeFile(t, env.CWD, "huge line.txt", "short\n"+strings.Repeat("x", 60*1024)+"\nafter\n")
	writeFile(t, env.CWD, "latin1.txt", "caf\xe9 au lait, na\xefve, tr\xe8s bien, d\xe9j\xe0 vu, \xe0 la carte\n")
	writeFile(t, env.CWD, "binary.bin", "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00")
	writeFile(t, env.CWD, "BM.txt", "BM is a text file that starts with BM\n")
	if err := os.Mkdir(filepath.Join(env.CWD, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ label, args string }{
		{"whole small file", `{"path":"small.txt"}`},
		{"no final newline", `{"path":"nofinal.txt"}`},
		{"empty file", `{"path":"empty.txt"}`},
		{"CRLF kept", `{"path":"crlf.txt"}`},
		{"offset and limit", `{"path":"small.txt","offset":2,"limit":1}`},
		{"limit up to the final newline: nothing to read on", `{"path":"small.txt","limit":3}`},
		{"offset 0 reads from the start", `{"path":"small.txt","offset":0,"limit":1}`},
		{"fractional offset and limit", `{"path":"small.txt","offset":2.7,"limit":1.9}`},
		{"offset at the empty last piece", `{"path":"small.txt","offset":4}`},
		{"offset past the end", `{"path":"small.txt","offset":6}`},
		{"cut by lines", `{"path":"long.txt"}`},
		{"reading on", `{"path":"long.txt","offset":2001}`},
		{"limit inside a long file", `{"path":"long.txt","offset":10,"limit":3}`},
		{"cut by bytes", `{"path":"wide.txt"}`},
		{"first line too long", `{"path":"huge line.txt","offset":2}`},
		{"long line after the first", `{"path":"huge line.txt"}`},
		{"missing file", `{"path":"nope.txt"}`},
		{"a directory", `{"path":"dir"}`},
		{"binary file", `{"path":"binary.bin"}`},
		{"invalid UTF-8 text", `{"path":"latin1.txt"}`},
		{"BM text is no bitmap", `{"path":"BM.txt"}`},
		{"at-prefixed path", `{"path":"@small.txt","limit":1}`},
	}
	tr := newTranscript(env)
	for _, tt := range tests {
		res, err := call(t, context.Background(), env, "read", tt.args)
		tr.add(tt.label+" "+tt.args, res, err)
	}
	golden.Check(t, "read.golden", tr.String())
}

func TestReadTruncationDetails(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.CWD, "long.txt", numberedLines(2500))
	res, err := call(t, context.Background(), env, "read", `{"path":"long.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Truncation Truncation `json:"truncation"`
	}
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatal(err)
	}
	want := Truncation{Truncated: true, TruncatedBy: "lines", TotalLines: 2500, TotalBytes: len(numberedLines(2500)),
		OutputLines: 2000, OutputBytes: len(strings.TrimSuffix(numberedLines(2000), "\n")), MaxLines: MaxLines, MaxBytes: MaxBytes}
	if d.Truncation != want {
		t.Errorf("truncation\n got %+v\nwant %+v", d.Truncation, want)
	}
	text := resultText(res)
	if !strings.HasPrefix(text, "line 1\n") || !strings.Contains(text, "line 2000\n\n[") || strings.Contains(text, "line 2001") {
		t.Errorf("text does not hold exactly lines 1-2000")
	}
}

// TestReadAllOfALargeFile reads a file in the steps the notices give and
// gets every line back once.
func TestReadAllOfALargeFile(t *testing.T) {
	env := testEnv(t)
	var b strings.Builder
	for i := 1; i <= 7000; i++ {
		fmt.Fprintf(&b, "%d %s\n", i, strings.Repeat("z", i%97))
	}
	want := b.String()
	writeFile(t, env.CWD, "big.txt", want)
	var got strings.Builder
	offset := 1
	for step := 0; step < 100; step++ {
		text := mustCall(t, env, "read", fmt.Sprintf(`{"path":"big.txt","offset":%d}`, offset))
		body, notice, cut := strings.Cut(text, "\n\n[")
		got.WriteString(body)
		if !cut {
			break
		}
		got.WriteString("\n")
		i := strings.Index(notice, "offset=")
		if _, err := fmt.Sscanf(notice[i:], "offset=%d", &offset); err != nil {
			t.Fatalf("notice %q: %v", notice, err)
		}
	}
	if got.String() != want {
		t.Errorf("reading on with the notices' offsets did not give the file back")
	}
}

func TestReadImages(t *testing.T) {
	env := testEnv(t)
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	bmp := make([]byte, 58)
	copy(bmp, "BM")
	bmp[14] = 40
	files := map[string]struct {
		data []byte
		mime string
	}{
		"pic.png":       {pngData.Bytes(), "image/png"},
		"photo.data":    {[]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), "image/jpeg"},
		"anim.gif":      {[]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "image/gif"},
		"pic.webp":      {[]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), "image/webp"},
		"pic.bmp":       {bmp, "image/bmp"},
		"no-extension":  {pngData.Bytes(), "image/png"},
		"a\u202fAM.png": {pngData.Bytes(), "image/png"},
	}
	for name, f := range files {
		p := filepath.Join(env.CWD, name)
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
		arg := name
		if strings.Contains(name, "\u202f") {
			arg = "a AM.png" // macOS screenshot names have a narrow space the model types as a space
		}
		res, err := call(t, context.Background(), env, "read", fmt.Sprintf(`{"path":%q}`, arg))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.Content) != 2 {
			t.Fatalf("%s: %d blocks", name, len(res.Content))
		}
		note := res.Content[0].(llm.Text).Text
		want := fmt.Sprintf("Image file %s (%s, %s)", p, f.mime, FormatSize(int64(len(f.data))))
		if note != want {
			t.Errorf("%s: note %q, want %q", name, note, want)
		}
		im, ok := res.Content[1].(llm.Image)
		if !ok || im.MIMEType != f.mime {
			t.Fatalf("%s: second block %#v", name, res.Content[1])
		}
		if data, err := base64.StdEncoding.DecodeString(im.Data); err != nil || !bytes.Equal(data, f.data) {
			t.Errorf("%s: image data does not round-trip", name)
		}
	}
}

func TestReadAborted(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.CWD, "a.txt", "a\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := call(t, ctx, env, "read", `{"path":"a.txt"}`)
	if !errors.Is(err, ErrAborted) || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want ErrAborted", err)
	}
}

func TestReadUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	env := testEnv(t)
	p := writeFile(t, env.CWD, "secret.txt", "x")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	if got := mustFail(t, env, "read", `{"path":"secret.txt"}`); !strings.Contains(got, p) || !strings.Contains(got, "permission denied") {
		t.Errorf("error %q", got)
	}
}
