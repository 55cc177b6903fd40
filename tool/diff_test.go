package tool

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// applyPatch applies a unified diff made by unifiedDiff to old, strictly:
// every context and deleted line must be there.
func applyPatch(old, patch string) (string, error) {
	lines := strings.SplitAfter(patch, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", errors.New("no headers")
	}
	src := splitLines(old)
	var out []string
	pos := 0 // next source line
	var last *string
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		switch {
		case strings.HasPrefix(l, "@@ "):
			var os_, ol, ns, nl int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &os_, &ol, &ns, &nl); err != nil {
				return "", fmt.Errorf("bad hunk header %q", l)
			}
			start := os_ - 1
			if ol == 0 {
				start = os_
			}
			if start < pos {
				return "", fmt.Errorf("hunk %q goes back", l)
			}
			out = append(out, src[pos:start]...)
			pos = start
			last = nil
		case l == "\\ No newline at end of file\n":
			if last == nil {
				return "", errors.New("misplaced no-newline marker")
			}
			*last = strings.TrimSuffix(*last, "\n")
		case l[0] == ' ' || l[0] == '-':
			text := l[1:]
			if pos >= len(src) || (src[pos] != text && src[pos] != strings.TrimSuffix(text, "\n")) {
				return "", fmt.Errorf("line %d: %q does not match %q", pos+1, text, at(src, pos))
			}
			if l[0] == ' ' {
				out = append(out, src[pos])
				last = &out[len(out)-1]
			} else {
				s := text
				last = &s // a marker after it refers to the deleted line
			}
			pos++
		case l[0] == '+':
			out = append(out, l[1:])
			last = &out[len(out)-1]
		default:
			return "", fmt.Errorf("bad line %q", l)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end)"
}

// lcs is the length of the longest common subsequence, by dynamic
// programming: the reference a shortest edit script is measured against.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func randomSeq(r *rand.Rand, n, alphabet int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(r.IntN(alphabet)) + "\n"
	}
	return out
}

// checkScript checks that ops turn a into b.
func checkScript(t *testing.T, a, b []string, ops []diffOp) {
	t.Helper()
	var gotA, gotB []string
	for _, op := range ops {
		switch op.kind {
		case ' ':
			if a[op.a] != b[op.b] {
				t.Fatalf("kept line differs: %q vs %q", a[op.a], b[op.b])
			}
			gotA, gotB = append(gotA, a[op.a]), append(gotB, b[op.b])
		case '-':
			gotA = append(gotA, a[op.a])
		case '+':
			gotB = append(gotB, b[op.b])
		}
	}
	if strings.Join(gotA, "") != strings.Join(a, "") || strings.Join(gotB, "") != strings.Join(b, "") {
		t.Fatalf("script does not cover both sides:\na=%q\nb=%q\nops=%v", a, b, ops)
	}
}

func TestDiffLinesMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		a := randomSeq(r, r.IntN(30), 1+r.IntN(6))
		b := randomSeq(r, r.IntN(30), 1+r.IntN(6))
		ops := diffLines(a, b)
		checkScript(t, a, b, ops)
		kept := 0
		for _, op := range ops {
			if op.kind == ' ' {
				kept++
			}
		}
		if want := lcs(a, b); kept != want {
			t.Fatalf("kept %d lines, the LCS is %d\na=%q\nb=%q", kept, want, a, b)
		}
	}
}

func TestDiffLinesOverBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	// Two unrelated large regions: the floor of the cost is over the budget.
	a := randomSeq(r, 3000, 1_000_000)
	b := randomSeq(r, 3000, 1_000_000)
	checkScript(t, a, b, diffLines(a, b))
	// Related but with more than the budget of scattered changes.
	c := append([]string(nil), a...)
	for i := 0; i < len(c); i += 2 {
		c[i] = "changed " + c[i]
	}
	checkScript(t, a, c, diffLines(a, c))
}

func TestPatchAppliesWithPatch(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch not installed")
	}
	r := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	for i := range 60 {
		a := randomSeq(r, r.IntN(40), 8)
		b := randomSeq(r, r.IntN(40), 8)
		if i%3 == 0 && len(b) > 0 {
			b[len(b)-1] = strings.TrimSuffix(b[len(b)-1], "\n") // no final newline
		}
		if i%5 == 0 && len(a) > 0 {
			a[len(a)-1] = strings.TrimSuffix(a[len(a)-1], "\n")
		}
		oldText, newText := strings.Join(a, ""), strings.Join(b, "")
		if oldText == newText {
			continue
		}
		p := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(p, []byte(oldText), 0o644); err != nil {
			t.Fatal(err)
		}
		patch := unifiedDiff("f.txt", a, b, diffLines(a, b))
		cmd := exec.Command("patch", "-s", "-p0", "--no-backup-if-mismatch", "-r", "-", p)
		cmd.Stdin = strings.NewReader(patch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch: %v\n%s\n%s", err, out, patch)
		}
		if got := readFile(t, p); got != newText {
			t.Fatalf("patch made %q, want %q\n%s", got, newText, patch)
		}
		if got, err := applyPatch(oldText, patch); err != nil || got != newText {
			t.Fatalf("applyPatch: %q, %v", got, err)
		}
	}
}

func TestDisplayDiff(t *testing.T) {
	var old []string
	for i := 1; i <= 30; i++ {
		old = append(old, strconv.Itoa(i)+"\n")
	}
	new := append([]string(nil), old[:29]...) // line 30 deleted
	new[6], new[19] = "seven\n", "twenty\n"
	got, first := displayDiff(old, new, diffLines(old, new), 2)
	want := strings.Join([]string{
		"    ...", "  3 3", "  4 4", "  5 5", "  6 6", "- 7 7", "+ 7 seven",
		"  8 8", "  9 9", " 10 10", " 11 11", "    ...", " 16 16", " 17 17", " 18 18", " 19 19", "-20 20", "+20 twenty",
		" 21 21", " 22 22", " 23 23", " 24 24", "    ...", " 26 26", " 27 27", " 28 28", " 29 29", "-30 30",
	}, "\n")
	if got != want {
		t.Errorf("display diff:\n%s\nwant:\n%s", got, want)
	}
	if first != 7 {
		t.Errorf("first changed line %d", first)
	}
	// Runs of at most twice the context between changes are shown whole.
	short := append([]string(nil), old[:12]...)
	changed := append([]string(nil), short...)
	changed[1], changed[10] = "b\n", "k\n"
	got, _ = displayDiff(short, changed, diffLines(short, changed), 2)
	if strings.Contains(got, "...") || strings.Count(got, "\n") != 13 {
		t.Errorf("a gap of 8 lines was skipped:\n%s", got)
	}
}
