// Package numfmt formats numbers for people: the token counts, sizes and
// totals that the commands, the terminal UI and error messages show.
package numfmt

import (
	"strconv"
	"strings"
)

// Commas writes n with thousands separators: 183616 → "183,616".
func Commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
