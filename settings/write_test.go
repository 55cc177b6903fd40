package settings

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/internal/jsonedit"
	"github.com/prime-agent/prime/internal/lockdir"
)

// The test binary doubles as another process writing the same settings
// file (see helperProcess).
func TestMain(m *testing.M) {
	switch os.Getenv("SETTINGS_HELPER") {
	case "":
		os.Exit(m.Run())
	case "write":
		os.Exit(helperWrite())
	case "hold":
		os.Exit(helperHold())
	}
	fmt.Fprintln(os.Stderr, "unknown SETTINGS_HELPER")
	os.Exit(2)
}

// helperWrite sets SETTINGS_N per-model overrides named
// SETTINGS_PREFIX<i>/m in the global file of SETTINGS_AGENT_DIR, one write
// each, as fast as it can.
func helperWrite() int {
	n, _ := strconv.Atoi(os.Getenv("SETTINGS_N"))
	ctx := context.Background()
	s, err := Load(ctx, Options{AgentDir: os.Getenv("SETTINGS_AGENT_DIR")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := range n {
		key := fmt.Sprintf(`compaction.modelOverrides["%s%d/m"].reserveTokens`, os.Getenv("SETTINGS_PREFIX"), i)
		if s, err = s.Set(ctx, Global, key, strconv.Itoa(i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// helperHold takes the lock on SETTINGS_FILE as pi would, says "locked",
// waits for a line on stdin, then (like pi under its lock) writes the file
// with a new top-level key added, and releases the lock.
func helperHold() int {
	file := os.Getenv("SETTINGS_FILE")
	lk, err := lockdir.Acquire(context.Background(), file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	src, _ := os.ReadFile(file)
	doc, err := jsonedit.Parse(src)
	if err == nil {
		src, err = doc.Set([]string{"writtenByPi"}, []byte("true"))
	}
	if err == nil {
		err = os.WriteFile(file, src, 0o644)
	}
	if err == nil {
		err = lk.Release()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func helperProcess(t *testing.T, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// piSettings is a global file as pi leaves it, with keys Prime does not know.
const piSettings = `{
  "lastChangelogVersion": "0.73.1",
  "defaultProvider": "anthropic",
  "defaultModel": "claude-sonnet-4-5",
  "compaction": {
    "enabled": true,
    "reserveTokens": 16384
  },
  "packages": [
    "npm:pi-foo",
    {
      "source": "git:github.com/x/y",
      "skills": []
    }
  ],
  "terminal": {
    "showImages": false
  }
}`

func TestSetPreservesTheFile(t *testing.T) {
	tests := []struct {
		name, key, value string
		want             string
	}{
		{
			name: "toggle in place", key: "compaction.enabled", value: "false",
			want: strings.Replace(piSettings, `"enabled": true`, `"enabled": false`, 1),
		},
		{
			name: "new key in an existing section", key: "compaction.keepRecentTokens", value: "30000",
			want: strings.Replace(piSettings, "\"reserveTokens\": 16384\n", "\"reserveTokens\": 16384,\n    \"keepRecentTokens\": 30000\n", 1),
		},
		{
			name: "new section", key: "retry.maxRetries", value: "5",
			want: strings.Replace(piSettings, "    \"showImages\": false\n  }\n}", "    \"showImages\": false\n  },\n  \"retry\": {\n    \"maxRetries\": 5\n  }\n}", 1),
		},
		{
			name: "summary model", key: "compaction.model", value: "anthropic/claude-haiku-4-5",
			want: strings.Replace(piSettings, "\"reserveTokens\": 16384\n", "\"reserveTokens\": 16384,\n    \"model\": \"anthropic/claude-haiku-4-5\"\n", 1),
		},
		{
			name: "per-model override", key: `compaction.modelOverrides[openai/gpt-4.1].keepRecentTokens`, value: "40000",
			want: strings.Replace(piSettings, "\"reserveTokens\": 16384\n", "\"reserveTokens\": 16384,\n    \"modelOverrides\": {\n      \"openai/gpt-4.1\": {\n        \"keepRecentTokens\": 40000\n      }\n    }\n", 1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent, _ := dirs(t, piSettings, "")
			s, err := Load(context.Background(), Options{AgentDir: agent})
			if err != nil {
				t.Fatal(err)
			}
			ns, err := s.Set(context.Background(), Global, tt.key, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, readFile(t, s.GlobalFile())); diff != "" {
				t.Errorf("file after Set(%s, %s) (-want +got):\n%s", tt.key, tt.value, diff)
			}
			// The returned snapshot has the new value.
			k, _ := parseKey(tt.key)
			want, _, _ := k.parseValue(tt.value)
			if got, src := value(t, ns, k.model, k.String()); !cmp.Equal(got, want) || src.Scope != Global {
				t.Errorf("after Set: %s = %v from %v, want %v from global", tt.key, got, src, want)
			}
			if len(ns.Problems()) != 0 {
				t.Errorf("problems after Set: %v", ns.Problems())
			}
		})
	}
}

func TestSetCreatesFiles(t *testing.T) {
	root := t.TempDir()
	agent := filepath.Join(root, "agent") // does not exist yet
	proj := filepath.Join(root, "proj")
	os.MkdirAll(proj, 0o755)
	s, err := Load(context.Background(), Options{AgentDir: agent, ProjectDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	// Unsetting in a missing file creates nothing.
	if _, found, err := s.Unset(context.Background(), Global, "compaction.enabled"); err != nil || found {
		t.Fatalf("Unset on no file = %v, %v", found, err)
	}
	if _, err := os.Stat(agent); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Unset created %s", agent)
	}
	s, err = s.Set(context.Background(), Project, "branchSummary.skipPrompt", "true")
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"branchSummary\": {\n    \"skipPrompt\": true\n  }\n}\n"
	if got := readFile(t, filepath.Join(proj, ".prime", "agent", "settings.json")); got != want {
		t.Errorf("new project file = %q, want %q", got, want)
	}
	if fi, err := os.Stat(s.ProjectFile()); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode: %v, %v", fi.Mode(), err)
	}
	if !s.BranchSummary().SkipPrompt {
		t.Error("the new value is not in the returned settings")
	}
	if _, err := os.Stat(agent); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a project write created the agent directory")
	}
}

func TestSetRefuses(t *testing.T) {
	const global = `{"compaction": 5, "retry": {"maxRetries": 1}}`
	agent, _ := dirs(t, global, "")
	s, err := Load(context.Background(), Options{AgentDir: agent})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range [][2]string{
		{"compaction.nope", "1"},
		{"compaction.reserveTokens", "-5"},
		{"compaction.reserveTokens", "1.5"},
		{"compaction.reserveTokens", "9007199254740992"},
		{"compaction.enabled", "yes"},
		{"compaction.model", "gpt-5"},
		{"compaction.model", ""},
		{`compaction.modelOverrides["gpt-5"].reserveTokens`, "1"},
		{`compaction.modelOverrides["a/b"].enabled`, "true"},
		{`compaction.modelOverrides[a/b]`, "1"},
		{"retry.maxRetries", "three"},
		// compaction is a number in the file: not replaced behind the user's back.
		{"compaction.enabled", "true"},
	} {
		_, err := s.Set(ctx, Global, tc[0], tc[1])
		if err == nil {
			t.Errorf("Set(%s, %q): no error", tc[0], tc[1])
			continue
		}
		// Bad input is ErrInvalid; the last case is a file it will not touch.
		invalid := tc != [2]string{"compaction.enabled", "true"}
		if errors.Is(err, ErrInvalid) != invalid || strings.HasPrefix(err.Error(), "settings: ") {
			t.Errorf("Set(%s, %q) = %v: want no package prefix, ErrInvalid %v", tc[0], tc[1], err, invalid)
		}
	}
	if _, err := s.Set(ctx, Global, "compaction.enabled", "true"); !errors.Is(err, jsonedit.ErrNotObject) || !strings.Contains(err.Error(), "compaction is a number, not an object") {
		t.Errorf("Set through a number = %v", err)
	}
	if got := readFile(t, s.GlobalFile()); got != global {
		t.Errorf("refused writes changed the file: %q", got)
	}
	if _, err := Defaults().Set(ctx, Global, "compaction.enabled", "true"); err == nil {
		t.Error("Set on Defaults(): no error")
	}
	if _, err := s.Set(ctx, Project, "compaction.enabled", "true"); err == nil {
		t.Error("Set(Project) without a project: no error")
	}
}

func TestUnset(t *testing.T) {
	agent, _ := dirs(t, piSettings, "")
	s, _ := Load(context.Background(), Options{AgentDir: agent})
	ns, found, err := s.Unset(context.Background(), Global, "compaction.reserveTokens")
	if err != nil || !found {
		t.Fatalf("Unset = %v, %v", found, err)
	}
	want := strings.Replace(piSettings, "\"enabled\": true,\n    \"reserveTokens\": 16384\n", "\"enabled\": true\n", 1)
	if diff := cmp.Diff(want, readFile(t, s.GlobalFile())); diff != "" {
		t.Errorf("file after Unset (-want +got):\n%s", diff)
	}
	if _, src := value(t, ns, "", "compaction.reserveTokens"); src.Scope != Default {
		t.Errorf("after Unset the value comes from %v", src)
	}
	if _, found, err := ns.Unset(context.Background(), Global, "compaction.reserveTokens"); err != nil || found {
		t.Errorf("second Unset = %v, %v; want not found", found, err)
	}
	if got := readFile(t, s.GlobalFile()); got != want {
		t.Error("an Unset that found nothing changed the file")
	}
}

func TestTrust(t *testing.T) {
	const global = "{\n  \"theme\": \"dark\",\n  \"trustedProjects\": [\n    \"/keep/me\",\n    42\n  ]\n}"
	agent, proj := dirs(t, global, "")
	ctx := context.Background()
	s, _ := Load(ctx, Options{AgentDir: agent, ProjectDir: proj})
	if s.Trusted(proj) {
		t.Fatal("trusted before Trust")
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(proj, link); err != nil {
		t.Fatal(err)
	}
	s, err := s.Trust(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	real := canonicalDir(proj)
	want := "{\n  \"theme\": \"dark\",\n  \"trustedProjects\": [\n    \"/keep/me\",\n    42,\n    \"" + real + "\"\n  ]\n}"
	if diff := cmp.Diff(want, readFile(t, s.GlobalFile())); diff != "" {
		t.Errorf("file after Trust (-want +got):\n%s", diff)
	}
	if !s.Trusted(proj) || !s.Trusted(link) || !s.Trusted(proj+"/") {
		t.Error("Trusted is false for the project, its link, or with a trailing slash")
	}
	if s.Trusted(filepath.Join(proj, ".prime")) || s.Trusted(filepath.Dir(proj)) {
		t.Error("trust leaked to a subdirectory or the parent")
	}
	if got := s.TrustedProjects(); !cmp.Equal(got, []string{"/keep/me", real}) {
		t.Errorf("TrustedProjects = %v", got)
	}
	// Trusting again changes nothing.
	if s, err = s.Trust(ctx, proj); err != nil || readFile(t, s.GlobalFile()) != want {
		t.Errorf("second Trust changed the file (%v)", err)
	}
	s, found, err := s.Untrust(ctx, link)
	if err != nil || !found {
		t.Fatalf("Untrust = %v, %v", found, err)
	}
	want = "{\n  \"theme\": \"dark\",\n  \"trustedProjects\": [\n    \"/keep/me\",\n    42\n  ]\n}"
	if diff := cmp.Diff(want, readFile(t, s.GlobalFile())); diff != "" {
		t.Errorf("file after Untrust (-want +got):\n%s", diff)
	}
	if s.Trusted(proj) {
		t.Error("still trusted after Untrust")
	}
	// A directory that no longer exists can still be removed by name.
	if s, found, err = s.Untrust(ctx, "/keep/me"); err != nil || !found || len(s.TrustedProjects()) != 0 {
		t.Errorf("Untrust of a missing directory = %v, %v, %v", found, err, s.TrustedProjects())
	}
	if _, found, _ := s.Untrust(ctx, "/never"); found {
		t.Error("Untrust of an unknown directory reported found")
	}
}

func TestTrustRefusesANonList(t *testing.T) {
	agent, proj := dirs(t, `{"trustedProjects": "/x"}`, "")
	s, _ := Load(context.Background(), Options{AgentDir: agent})
	if _, err := s.Trust(context.Background(), proj); err == nil || !strings.Contains(err.Error(), "trustedProjects is a string, not a list") {
		t.Errorf("Trust = %v", err)
	}
	if got := readFile(t, s.GlobalFile()); got != `{"trustedProjects": "/x"}` {
		t.Errorf("file changed: %q", got)
	}
}

func TestWriteKeepsModeAndLinks(t *testing.T) {
	root := t.TempDir()
	agent := filepath.Join(root, "agent")
	dotfiles := filepath.Join(root, "dotfiles")
	os.MkdirAll(agent, 0o755)
	os.MkdirAll(dotfiles, 0o755)
	real := filepath.Join(dotfiles, "prime-settings.json")
	if err := os.WriteFile(real, []byte(`{"a": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(agent, "settings.json")); err != nil {
		t.Fatal(err)
	}
	s, _ := Load(context.Background(), Options{AgentDir: agent})
	if _, err := s.Set(context.Background(), Global, "retry.enabled", "false"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(agent, "settings.json"))
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	if got := readFile(t, real); got != `{"a": 1, "retry": {"enabled": false}}` {
		t.Errorf("linked file = %q", got)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600 kept", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dotfiles)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// TestConcurrentWriters runs writers in two processes and two goroutines
// against one file: every write re-reads the file under the lock, so none
// is lost.
func TestConcurrentWriters(t *testing.T) {
	agent, _ := dirs(t, piSettings, "")
	const n = 25
	child := helperProcess(t, "SETTINGS_HELPER=write", "SETTINGS_AGENT_DIR="+agent, "SETTINGS_N="+strconv.Itoa(n), "SETTINGS_PREFIX=child")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, prefix := range []string{"a", "b"} {
		wg.Go(func() {
			ctx := context.Background()
			s, err := Load(ctx, Options{AgentDir: agent})
			for i := 0; i < n && err == nil; i++ {
				s, err = s.Set(ctx, Global, fmt.Sprintf(`compaction.modelOverrides["%s%d/m"].reserveTokens`, prefix, i), strconv.Itoa(i))
			}
			errs <- err
		})
	}
	wg.Wait()
	if err := child.Wait(); err != nil {
		t.Fatalf("writer process: %v", err)
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(context.Background(), Options{AgentDir: agent})
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("problems after concurrent writes: %v", p)
	}
	for _, prefix := range []string{"child", "a", "b"} {
		for i := range n {
			if got := s.Compaction(fmt.Sprintf("%s%d/m", prefix, i)).ReserveTokens; got != i {
				t.Errorf("%s%d/m: reserveTokens %d, want %d (a write was lost)", prefix, i, got, i)
			}
		}
	}
	// pi's keys survived every write.
	src := readFile(t, s.GlobalFile())
	for _, keep := range []string{`"lastChangelogVersion": "0.73.1"`, `"source": "git:github.com/x/y"`, `"showImages": false`} {
		if !strings.Contains(src, keep) {
			t.Errorf("lost %s", keep)
		}
	}
	if _, err := os.Stat(s.GlobalFile() + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock left behind: %v", err)
	}
}

// TestWaitsForAnotherProcessLock: while another process holds the lock, a
// write waits; it then sees what that process wrote and keeps it.
func TestWaitsForAnotherProcessLock(t *testing.T) {
	agent, _ := dirs(t, piSettings, "")
	file := filepath.Join(agent, "settings.json")
	child := helperProcess(t, "SETTINGS_HELPER=hold", "SETTINGS_FILE="+file)
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(line) != "locked" {
		child.Process.Kill()
		t.Fatalf("helper: %q, %v", line, err)
	}
	s, _ := Load(context.Background(), Options{AgentDir: agent})
	done := make(chan error, 1)
	go func() {
		_, err := s.Set(context.Background(), Global, "compaction.enabled", "false")
		done <- err
	}()
	// The other process writes under its lock only now, after our Set has
	// started waiting (or not yet started: either way it must wait).
	io.WriteString(stdin, "go\n")
	if err := child.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := readFile(t, file)
	if !strings.Contains(got, `"writtenByPi": true`) || !strings.Contains(got, `"enabled": false`) {
		t.Errorf("one of the two writes was lost:\n%s", got)
	}
}

func TestLockTimeoutMessage(t *testing.T) {
	agent, _ := dirs(t, piSettings, "")
	file := filepath.Join(agent, "settings.json")
	os.Mkdir(file+".lock", 0o755) // held by someone, and fresh
	s, _ := Load(context.Background(), Options{AgentDir: agent})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Set(ctx, Global, "compaction.enabled", "false")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, lockdir.ErrLocked) {
		t.Errorf("Set with the lock held and ctx cancelled = %v", err)
	}
	if readFile(t, file) != piSettings {
		t.Error("file changed without the lock")
	}
}

// A write replaces the file rather than rewriting it in place: a reader
// that opened it before keeps the old text whole, a hard link to it keeps
// the old file, and no temporary file is left in the directory.
func TestWriteReplacesAtomically(t *testing.T) {
	agent, _ := dirs(t, `{"a": 1}`, "")
	s, _ := Load(context.Background(), Options{AgentDir: agent})
	file := s.GlobalFile()
	old, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Link(file, link); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if _, err := s.Set(context.Background(), Global, "retry.enabled", "false"); err != nil {
		t.Fatal(err)
	}
	seen, err := io.ReadAll(old)
	if err != nil || string(seen) != `{"a": 1}` {
		t.Errorf("a reader of the old file saw %q, %v", seen, err)
	}
	if got := readFile(t, link); got != `{"a": 1}` {
		t.Errorf("the hard link saw %q: the file was rewritten in place", got)
	}
	if got := readFile(t, file); got != `{"a": 1, "retry": {"enabled": false}}` {
		t.Errorf("file = %q", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
