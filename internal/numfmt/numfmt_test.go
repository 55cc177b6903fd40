package numfmt

import (
	"math"
	"testing"
)

func TestCommas(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 183616: "183,616",
		1234567: "1,234,567", -1000: "-1,000", -12: "-12", math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		if got := Commas(n); got != want {
			t.Errorf("Commas(%d) = %q, want %q", n, got, want)
		}
	}
}
