package numfmt

import "testing"

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1k"}, {1234, "1.2k"}, {9_960, "10k"}, {12_345, "12k"},
		{999_499, "999k"}, {1_260_000, "1.3M"}, {12_000_000, "12M"}, {-4200, "-4200"},
	} {
		if got := Tokens(c.n); got != c.want {
			t.Errorf("Tokens(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
