package agent_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/hook"
	"github.com/prime-agent/prime/session/sessiongen"
	"github.com/prime-agent/prime/settings"
)

// benchSession writes a generated session of n entries (pi's settings, a
// 200,000-token window) and returns its path and bytes.
func benchSession(b *testing.B, n int) (string, []byte) {
	b.Helper()
	data := sessiongen.Bytes(sessiongen.Options{Entries: n, Seed: 1})
	path := filepath.Join(b.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path, data
}

// BenchmarkCompactDryRun is "prime compact FILE --dry-run": load the file,
// resolve settings and summarizer, prepare the compaction.
func BenchmarkCompactDryRun(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			path, data := benchSession(b, n)
			cfg := agent.Config{Settings: settings.Defaults(), AgentDir: b.TempDir(), Getenv: func(string) string { return "" }}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				ag, err := agent.Load(path, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ag.PlanCompaction(b.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompactOffline is "prime compact FILE --offline": open the file
// for appending, prepare, build the summary by code, append the entry,
// rebuild the context. Each iteration works on a fresh copy.
func BenchmarkCompactOffline(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			benchCompactOffline(b, n, agent.Config{Settings: settings.Defaults()})
		})
	}
}

// BenchmarkCompactOfflineWithHooks is BenchmarkCompactOffline with two
// command hooks that read their event and answer nothing
// (session_before_compact and session_compact): the cost of encoding the
// events (the whole path as branchEntries) and of running two processes.
func BenchmarkCompactOfflineWithHooks(b *testing.B) {
	dir := b.TempDir()
	hooks := []any{
		map[string]any{"event": hook.EventBeforeCompact, "command": "sh", "args": []string{"-c", "cat > /dev/null"}},
		map[string]any{"event": hook.EventCompact, "command": "sh", "args": []string{"-c", "cat > /dev/null"}},
	}
	data, err := json.Marshal(map[string]any{"hooks": hooks})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	st, err := settings.Load(b.Context(), settings.Options{AgentDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	r := hook.New(st, hook.Options{})
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			benchCompactOffline(b, n, agent.Config{Settings: st, Hooks: r})
		})
	}
}

func benchCompactOffline(b *testing.B, n int, cfg agent.Config) {
	_, data := benchSession(b, n)
	path := filepath.Join(b.TempDir(), "copy.jsonl")
	cfg.AgentDir, cfg.Getenv = b.TempDir(), func(string) string { return "" }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ag, err := agent.Open(path, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ag.Compact(b.Context(), agent.CompactRequest{Summarizer: agent.SummarizerChoice{Offline: true}}); err != nil {
			b.Fatal(err)
		}
		ag.Close()
	}
}

// BenchmarkStats is the first Stats of a loaded session (the footer's and
// get_session_stats's sums): every message read back from the file.
func BenchmarkStats(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			path, _ := benchSession(b, n)
			cfg := agent.Config{Settings: settings.Defaults(), AgentDir: b.TempDir(), Getenv: func(string) string { return "" }}
			for b.Loop() {
				b.StopTimer()
				ag, err := agent.Load(path, cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if ag.Stats().TotalMessages == 0 {
					b.Fatal("no messages")
				}
				b.StopTimer()
				ag.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkStateDuringFirstStats is the footer's State while the first
// Stats of a loaded session sums it (the keys a TUI reads right after a
// long resume): the time of one State call made as the sum starts.
func BenchmarkStateDuringFirstStats(b *testing.B) {
	path, _ := benchSession(b, 100_000)
	cfg := agent.Config{Settings: settings.Defaults(), AgentDir: b.TempDir(), Getenv: func(string) string { return "" }}
	for b.Loop() {
		b.StopTimer()
		ag, err := agent.Load(path, cfg)
		if err != nil {
			b.Fatal(err)
		}
		started, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			close(started)
			ag.Stats()
		}()
		<-started
		runtime.Gosched()
		b.StartTimer()
		ag.State()
		b.StopTimer()
		<-done
		ag.Close()
		b.StartTimer()
	}
}

// BenchmarkStatsAfterAppend is Stats once its sums are kept: an entry
// appended since the last call, on a 100k-entry session.
func BenchmarkStatsAfterAppend(b *testing.B) {
	path, _ := benchSession(b, 100_000)
	cfg := agent.Config{Settings: settings.Defaults(), AgentDir: b.TempDir(), Getenv: func(string) string { return "" }}
	ag, err := agent.Load(path, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer ag.Close()
	// The first append opens the file for writing.
	if err := ag.SetSessionName("name"); err != nil {
		b.Fatal(err)
	}
	ag.Stats()
	for i := 0; b.Loop(); i++ {
		if err := ag.SetSessionName("name " + strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		ag.Stats()
	}
}

// BenchmarkStatsAfterReopen is the first append to a loaded 100k-entry
// session (which opens the file for writing) and the Stats after it, its
// sums already made: the first prompt after a resume.
func BenchmarkStatsAfterReopen(b *testing.B) {
	path, data := benchSession(b, 100_000)
	cfg := agent.Config{Settings: settings.Defaults(), AgentDir: b.TempDir(), Getenv: func(string) string { return "" }}
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		ag, err := agent.Load(path, cfg)
		if err != nil {
			b.Fatal(err)
		}
		ag.Stats()
		b.StartTimer()
		if err := ag.SetSessionName("name"); err != nil {
			b.Fatal(err)
		}
		ag.Stats()
		b.StopTimer()
		ag.Close()
		b.StartTimer()
	}
}
