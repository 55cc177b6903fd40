package numfmt

import (
	"strconv"
	"strings"
)

// Tokens writes a token count as the footer and the tree show it: 999,
// 1.2k, 12k, 1.2M, 12M.
func Tokens(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 10_000:
		return trimZero(strconv.FormatFloat(float64(n)/1000, 'f', 1, 64)) + "k"
	case n < 1_000_000:
		return strconv.Itoa((n+500)/1000) + "k"
	case n < 10_000_000:
		return trimZero(strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64)) + "M"
	}
	return strconv.Itoa((n+500_000)/1_000_000) + "M"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
