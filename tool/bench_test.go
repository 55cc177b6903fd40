package tool

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchTree writes n source-like files in nested directories, with a
// .gitignore that excludes a tenth of them.
func benchTree(b *testing.B, n int) Env {
	env := testEnv(b)
	writeFile(b, env.CWD, ".gitignore", "*.gen.go\nvendor/\n")
	body := strings.Repeat("func helper(x int) int {\n\treturn x * 2 // arithmetic\n}\n\n", 40)
	for i := range n {
		name := fmt.Sprintf("pkg%02d/sub%02d/file%04d.go", i%30, i%7, i)
		if i%10 == 0 {
			name = fmt.Sprintf("pkg%02d/file%04d.gen.go", i%30, i)
		}
		content := body
		if i%50 == 5 {
			content += "// NEEDLE here\n"
		}
		writeFile(b, env.CWD, name, content)
	}
	return env
}

func BenchmarkGrep(b *testing.B) {
	env := benchTree(b, 3000)
	tl := toolNamed(b, env, "grep")
	args := []byte(`{"pattern":"NEEDLE"}`)
	b.ResetTimer()
	for b.Loop() {
		res, err := tl.Run(context.Background(), Call{Args: args})
		if err != nil || !strings.Contains(resultText(res), "NEEDLE") {
			b.Fatal(err, resultText(res))
		}
	}
}

func BenchmarkGrepContext(b *testing.B) {
	env := benchTree(b, 3000)
	tl := toolNamed(b, env, "grep")
	args := []byte(`{"pattern":"return x \\* \\d","context":2,"limit":1000}`)
	b.ResetTimer()
	for b.Loop() {
		if _, err := tl.Run(context.Background(), Call{Args: args}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFind(b *testing.B) {
	env := benchTree(b, 3000)
	tl := toolNamed(b, env, "find")
	args := []byte(`{"pattern":"**/sub03/*.go"}`)
	b.ResetTimer()
	for b.Loop() {
		if _, err := tl.Run(context.Background(), Call{Args: args}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBashLargeOutput measures a command writing 100,000 lines
// (about 600 KB): reading, keeping the tail, writing the full output file.
func BenchmarkBashLargeOutput(b *testing.B) {
	env := testEnv(b)
	tl := toolNamed(b, env, "bash")
	args := []byte(`{"command":"seq 1 100000"}`)
	b.ResetTimer()
	for b.Loop() {
		res, err := tl.Run(context.Background(), Call{Args: args, Update: func(Result) {}})
		if err != nil || res.IsError {
			b.Fatal(err)
		}
	}
}

// BenchmarkOutputWrite measures the output buffer alone on 64 KB chunks.
func BenchmarkOutputWrite(b *testing.B) {
	chunk := []byte(strings.Repeat("0123456789abcdef\n", 64*1024/17))
	b.SetBytes(int64(len(chunk)) * 100)
	dir := b.TempDir()
	for b.Loop() {
		o := output{tempDir: dir}
		for range 100 {
			o.write(chunk)
		}
		o.close()
		o.snapshot()
	}
}

func BenchmarkEditLargeFile(b *testing.B) {
	env := testEnv(b)
	var content strings.Builder
	for i := range 50000 {
		fmt.Fprintf(&content, "line %d of a large file\n", i)
	}
	tl := toolNamed(b, env, "edit")
	for b.Loop() {
		writeFile(b, env.CWD, "big.txt", content.String())
		_, err := tl.Run(context.Background(), Call{Args: []byte(`{"path":"big.txt","edits":[{"oldText":"line 25000 of","newText":"LINE"}]}`)})
		if err != nil {
			b.Fatal(err)
		}
	}
}
