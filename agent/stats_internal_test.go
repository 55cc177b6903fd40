package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/settings"
)

// loadGenerated loads a generated session of n entries; the agent is
// closed when the test ends.
func loadGenerated(t *testing.T, n int) (*Agent, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, sessiongen.Bytes(sessiongen.Options{Entries: n, Seed: 1}), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Load(path, Config{Settings: settings.Defaults(), AgentDir: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, path
}

// recount is the Stats of the file at path read afresh.
func recount(t *testing.T, path string) Stats {
	t.Helper()
	a, err := Load(path, Config{Settings: settings.Defaults(), AgentDir: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	return a.Stats()
}

// While the first Stats sums the session (held in the middle by the hook),
// State answers and an entry can be appended; the sum then takes in the
// new entry and equals a recount.
func TestStatsSumsWithoutTheLock(t *testing.T) {
	a, path := loadGenerated(t, 500)
	started, release := make(chan struct{}), make(chan struct{})
	calls := 0
	a.sumHook = func() {
		calls++
		if calls == 1 {
			close(started)
			<-release
		}
	}
	got := make(chan Stats)
	go func() { got <- a.Stats() }()
	<-started

	answered := make(chan State)
	go func() {
		a.State()
		if err := a.SetSessionName("renamed while summing"); err != nil {
			t.Error(err)
		}
		answered <- a.State()
	}()
	select {
	case st := <-answered:
		if st.SessionName != "renamed while summing" {
			t.Errorf("state during the sum: %+v", st)
		}
	case <-time.After(time.Minute):
		close(release)
		t.Fatal("State waited for the Stats sum")
	}
	close(release)
	st := <-got
	if want := recount(t, path); st != want || st.TotalMessages == 0 {
		t.Errorf("summed %+v, recount %+v", st, want)
	}
	if calls != 2 {
		t.Errorf("%d sums, want 2 (the file, then the entry appended meanwhile)", calls)
	}

	// Once kept, the sums grow with each append and no sum runs again:
	// the file opened for writing at the first append carried them over.
	calls = 0
	for _, name := range []string{"one", "two"} {
		if err := a.SetSessionName(name); err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st != recount(t, path) {
			t.Errorf("after naming %q: %+v, recount %+v", name, st, recount(t, path))
		}
	}
	if calls != 0 {
		t.Errorf("%d sums after the first, want none", calls)
	}
}

// A second Stats while the first sums waits for it and shares its result
// rather than summing the file again; the sum takes the entries a part at
// a time.
func TestStatsSumsOnce(t *testing.T) {
	a, path := loadGenerated(t, 2*statsPart+100)
	parts := (a.s.Len() + statsPart - 1) / statsPart
	started, release := make(chan struct{}), make(chan struct{})
	calls := 0
	a.sumHook = func() {
		calls++
		if calls == 1 {
			close(started)
			<-release
		}
	}
	first, second := make(chan Stats), make(chan Stats)
	go func() { first <- a.Stats() }()
	<-started
	go func() { second <- a.Stats() }()
	close(release)
	x, y := <-first, <-second
	if want := recount(t, path); x != want || y != want {
		t.Errorf("first %+v, second %+v, recount %+v", x, y, want)
	}
	if calls != parts || parts < 3 {
		t.Errorf("%d parts summed, want %d", calls, parts)
	}
}
