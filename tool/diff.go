package tool

import (
	"fmt"
	"strconv"
	"strings"
)

// diffContext is how many unchanged lines the edit diffs show around a
// change.
const diffContext = 4

// maxDiffCost bounds the work of the line diff: past this many inserted
// and deleted lines, the rest of the changed region is shown as deleted
// then inserted whole. Such a diff is still correct, only not minimal, and
// the memory of the search stays under about 10 MB.
const maxDiffCost = 1500

// diffOp is one line of an edit script: kept (' '), deleted ('-') or
// inserted ('+'). a and b are the line's index in the old and the new text
// (for '-' only a counts, for '+' only b).
type diffOp struct {
	kind byte
	a, b int
}

// splitLines splits text into lines that keep their "\n"; the last line
// has none when text does not end with one.
func splitLines(text string) []string {
	var lines []string
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

// diffLines returns a shortest edit script from a to b (Myers' algorithm,
// after the common head and tail are taken off), within maxDiffCost.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	// Lines are compared as numbers in the search: one per distinct text.
	ids := map[string]int32{}
	intern := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a[pre:len(a)-suf]), intern(b[pre:len(b)-suf])
	ops := make([]diffOp, 0, len(a)+len(b)-pre-suf)
	for i := range pre {
		ops = append(ops, diffOp{' ', i, i})
	}
	for _, op := range myers(x, y) {
		ops = append(ops, diffOp{op.kind, op.a + pre, op.b + pre})
	}
	for i := range suf {
		ops = append(ops, diffOp{' ', len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// myers finds a shortest edit script by the greedy forward search of
// Myers (1986), keeping the frontier of every step to walk back from the
// end. When the cost would pass maxDiffCost it gives up minimality.
func myers(a, b []int32) []diffOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 || costFloor(a, b) > maxDiffCost {
		return replaceAll(n, m)
	}
	off := n + m
	v := make([]int32, 2*off+2)
	var trace [][]int32
	for d := 0; d <= maxDiffCost; d++ {
		for k := -d; k <= d; k += 2 {
			var px int32
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				px = v[off+k+1] // down: an insertion
			} else {
				px = v[off+k-1] + 1 // right: a deletion
			}
			x := int(px)
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
				return backtrack(trace, n, m)
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	return replaceAll(n, m)
}

// costFloor is a lower bound of the edit script's cost: the lines of one
// side that have no equal on the other must be deleted or inserted. It
// lets two unrelated large regions skip a search that cannot succeed.
func costFloor(a, b []int32) int {
	count := map[int32]int{}
	for _, id := range a {
		count[id]++
	}
	common := 0
	for _, id := range b {
		if count[id] > 0 {
			count[id]--
			common++
		}
	}
	return len(a) + len(b) - 2*common
}

func backtrack(trace [][]int32, n, m int) []diffOp {
	var rev []diffOp
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // the frontier after step d-1: prev[k+d-1] is v[k]
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, diffOp{' ', x, y})
		}
		if x == px {
			y--
			rev = append(rev, diffOp{'+', x, y})
		} else {
			x--
			rev = append(rev, diffOp{'-', x, y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{' ', x, y})
	}
	ops := make([]diffOp, len(rev))
	for i, op := range rev {
		ops[len(rev)-1-i] = op
	}
	return ops
}

func replaceAll(n, m int) []diffOp {
	ops := make([]diffOp, 0, n+m)
	for i := range n {
		ops = append(ops, diffOp{'-', i, 0})
	}
	for j := range m {
		ops = append(ops, diffOp{'+', n, j})
	}
	return ops
}

// visibleOps marks the kept lines within diffContext lines of a change,
// which are the ones the diffs show.
func visibleOps(ops []diffOp) []bool {
	show := make([]bool, len(ops))
	last := -1 << 30 // index of the last change seen
	for i, op := range ops {
		if op.kind != ' ' {
			last = i
			show[i] = true
		} else if i-last <= diffContext {
			show[i] = true
		}
	}
	next := 1 << 30
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].kind != ' ' {
			next = i
		} else if next-i <= diffContext {
			show[i] = true
		}
	}
	return show
}

// displayDiff renders ops for people: "+N text", "-N text", " N text",
// line numbers right-aligned to width, and one " ..." line where unchanged
// lines are skipped. It also returns the first changed line's number in
// the new text.
func displayDiff(old, new []string, ops []diffOp, width int) (string, int) {
	show := visibleOps(ops)
	var b strings.Builder
	first := 0
	skipped := false
	line := func(sign byte, num int, text string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%c%*d %s", sign, width, num, strings.TrimSuffix(text, "\n"))
	}
	for i, op := range ops {
		if !show[i] {
			if !skipped {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				fmt.Fprintf(&b, " %*s ...", width, "")
				skipped = true
			}
			continue
		}
		skipped = false
		if op.kind != ' ' && first == 0 {
			first = op.b + 1
		}
		switch op.kind {
		case ' ':
			line(' ', op.a+1, old[op.a])
		case '-':
			line('-', op.a+1, old[op.a])
		case '+':
			line('+', op.b+1, new[op.b])
		}
	}
	return b.String(), first
}

// unifiedDiff renders ops as a unified diff of the file at path, with
// diffContext lines of context and hunks joined when their contexts touch.
func unifiedDiff(path string, old, new []string, ops []diffOp) string {
	var b strings.Builder
	b.WriteString("--- " + path + "\n+++ " + path + "\n")
	show := visibleOps(ops)
	for i := 0; i < len(ops); {
		if !show[i] {
			i++
			continue
		}
		j := i
		for j < len(ops) && show[j] {
			j++
		}
		writeHunk(&b, old, new, ops[i:j])
		i = j
	}
	return b.String()
}

func writeHunk(b *strings.Builder, old, new []string, ops []diffOp) {
	oldStart, newStart := ops[0].a+1, ops[0].b+1
	oldLen, newLen := 0, 0
	for _, op := range ops {
		if op.kind != '+' {
			oldLen++
		}
		if op.kind != '-' {
			newLen++
		}
	}
	// An empty range names the line before it, as diff and patch do.
	if oldLen == 0 {
		oldStart--
	}
	if newLen == 0 {
		newStart--
	}
	fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(oldStart, oldLen), hunkRange(newStart, newLen))
	for _, op := range ops {
		text := ""
		switch op.kind {
		case ' ', '-':
			text = old[op.a]
		case '+':
			text = new[op.b]
		}
		b.WriteByte(op.kind)
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}
