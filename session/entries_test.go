package session_test

import (
	"slices"
	"testing"
)

// EntriesBetween is a window of the entries in file order, clamped to
// those there are.
func TestEntriesBetween(t *testing.T) {
	s := parse(t, chain(user("a"), assistant("b"), user("c"), assistant("d"))...)
	all := ids(s.Entries())
	for _, c := range []struct {
		name string
		i, j int
		want []string
	}{
		{"all", 0, 4, all},
		{"a middle part", 1, 3, all[1:3]},
		{"beyond the end", 2, 100, all[2:]},
		{"before the start", -5, 1, all[:1]},
		{"empty", 2, 2, nil},
		{"reversed", 3, 1, nil},
		{"past the end", 4, 9, nil},
	} {
		if got := ids(s.EntriesBetween(c.i, c.j)); !slices.Equal(got, c.want) {
			t.Errorf("%s: EntriesBetween(%d, %d) = %v, want %v", c.name, c.i, c.j, got, c.want)
		}
	}
	if got := ids(s.EntriesFrom(1)); !slices.Equal(got, all[1:]) {
		t.Errorf("EntriesFrom(1) = %v", got)
	}
}
