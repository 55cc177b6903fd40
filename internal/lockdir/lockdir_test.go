package lockdir

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The test binary doubles as a second process that holds a lock: with
// LOCKDIR_HOLD=FILE it takes the lock on FILE, says "locked", and keeps the
// lock until its standard input closes.
func TestMain(m *testing.M) {
	if file := os.Getenv("LOCKDIR_HOLD"); file != "" {
		lk, err := Acquire(context.Background(), file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		if err := lk.Release(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestAcquireRelease(t *testing.T) {
	file := filepath.Join(t.TempDir(), "settings.json")
	lk, err := Acquire(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file + ".lock"); err != nil || !fi.IsDir() {
		t.Fatalf("lock directory while held: %v, %v", fi, err)
	}
	if _, err := (Locker{}).TryAcquire(file); !errors.Is(err, ErrLocked) {
		t.Errorf("second TryAcquire = %v, want ErrLocked", err)
	}
	if err := lk.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock directory after Release: %v", err)
	}
	lk, err = (Locker{}).TryAcquire(file)
	if err != nil {
		t.Fatalf("TryAcquire after Release: %v", err)
	}
	lk.Release()
}

func TestRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	got, err := Path("settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "settings.json.lock"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
}

func TestHeldLockTimesOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "settings.json")
	// A lock another process took a moment ago.
	if err := os.Mkdir(file+".lock", 0o777); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := Acquire(ctx, file)
	if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a held lock = %v, want ErrLocked and DeadlineExceeded", err)
	}
	if _, err := os.Stat(file + ".lock"); err != nil {
		t.Errorf("the other holder's lock was removed: %v", err)
	}
}

func TestStaleLockIsBroken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "settings.json")
	if err := os.Mkdir(file+".lock", 0o777); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-Stale - time.Second)
	if err := os.Chtimes(file+".lock", old, old); err != nil {
		t.Fatal(err)
	}
	lk, err := (Locker{}).TryAcquire(file)
	if err != nil {
		t.Fatalf("TryAcquire on a stale lock: %v", err)
	}
	fi, err := os.Stat(file + ".lock")
	if err != nil || time.Since(fi.ModTime()) > Stale/2 {
		t.Errorf("lock after breaking a stale one: mtime %v, %v; want fresh", fi.ModTime(), err)
	}
	if err := lk.Release(); err != nil {
		t.Fatal(err)
	}
}

// The holder's refreshes run on timers: the tests below run in a synctest
// bubble, where time moves only when every goroutine waits, so "after one
// update period" is exact and a missed refresh fails at once. The lock's
// times are the bubble's (the holder sets them with Chtimes).

func TestHolderKeepsLockFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "settings.json")
		lk, err := Locker{Stale: 2 * time.Second, Update: 50 * time.Millisecond}.TryAcquire(file)
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Release()
		first := lockTime(t, file)
		time.Sleep(60 * time.Millisecond) // one update period and a bit
		synctest.Wait()
		if got := lockTime(t, file); !got.Equal(first.Add(50 * time.Millisecond)) {
			t.Errorf("lock time %v after one update, want %v", got, first.Add(50*time.Millisecond))
		}
		if err := lk.Err(); err != nil {
			t.Errorf("Err() = %v while held normally", err)
		}
	})
}

// lockTime returns the modification time of file's lock.
func lockTime(t *testing.T, file string) time.Time {
	t.Helper()
	fi, err := os.Stat(file + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

func TestCompromised(t *testing.T) {
	t.Run("directory removed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "settings.json")
			lk, err := Locker{Stale: 2 * time.Second, Update: 20 * time.Millisecond}.TryAcquire(file)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(file + ".lock")
			time.Sleep(25 * time.Millisecond)
			synctest.Wait()
			if lk.Err() == nil {
				t.Error("the holder did not notice within one update period")
			}
			if err := lk.Release(); !errors.Is(err, ErrCompromised) {
				t.Errorf("Release = %v, want ErrCompromised", err)
			}
		})
	})
	t.Run("taken over", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "settings.json")
			lk, err := Locker{Stale: 2 * time.Second, Update: 20 * time.Millisecond}.TryAcquire(file)
			if err != nil {
				t.Fatal(err)
			}
			// Another process broke the lock as stale and took it: new mtime.
			other := time.Now().Add(time.Hour)
			os.Chtimes(file+".lock", other, other)
			time.Sleep(25 * time.Millisecond)
			synctest.Wait()
			if lk.Err() == nil {
				t.Error("the holder did not notice within one update period")
			}
			if err := lk.Release(); !errors.Is(err, ErrCompromised) {
				t.Errorf("Release = %v, want ErrCompromised", err)
			}
			if _, err := os.Stat(file + ".lock"); err != nil {
				t.Errorf("Release removed the new holder's lock: %v", err)
			}
		})
	})
}

// holder starts a second process that holds the lock on file until the
// returned function is called.
func holder(t *testing.T, file string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LOCKDIR_HOLD="+file)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		cmd.Process.Kill()
		t.Fatalf("helper process: %q, %v", line, err)
	}
	return func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process: %v", err)
		}
	}
}

func TestAnotherProcess(t *testing.T) {
	file := filepath.Join(t.TempDir(), "settings.json")
	release := holder(t, file)
	if _, err := (Locker{}).TryAcquire(file); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryAcquire while another process holds the lock = %v, want ErrLocked", err)
	}
	got := make(chan error, 1)
	go func() {
		lk, err := Acquire(context.Background(), file)
		if err == nil {
			err = lk.Release()
		}
		got <- err
	}()
	release()
	if err := <-got; err != nil {
		t.Fatalf("Acquire after the other process released: %v", err)
	}
}

// TestProperLockfile checks the protocol against the real proper-lockfile
// when node and the package are installed (NODE_PATH may point at them);
// otherwise it is skipped.
func TestProperLockfile(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	if err := exec.Command(node, "-e", "require.resolve('proper-lockfile')").Run(); err != nil {
		t.Skip("proper-lockfile not installed (npm install proper-lockfile; set NODE_PATH)")
	}
	file := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Prime holds the lock: pi's lockSync must fail with ELOCKED.
	lk, err := Acquire(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(node, "-e", `
		const lf = require('proper-lockfile');
		try { lf.lockSync(process.argv[1], {realpath: false}); console.log('acquired'); }
		catch (e) { console.log(e.code); }`, file).CombinedOutput()
	if got := strings.TrimSpace(string(out)); got != "ELOCKED" {
		t.Errorf("proper-lockfile while Prime holds the lock: %q, want ELOCKED", got)
	}
	lk.Release()

	// pi holds the lock: Prime must wait, then get it when pi releases.
	cmd := exec.Command(node, "-e", `
		const lf = require('proper-lockfile');
		const release = lf.lockSync(process.argv[1], {realpath: false});
		console.log('locked');
		process.stdin.resume();
		process.stdin.on('end', () => { release(); process.exit(0); });`, file)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); strings.TrimSpace(line) != "locked" {
		cmd.Process.Kill()
		t.Fatalf("node: %q", line)
	}
	if _, err := (Locker{}).TryAcquire(file); !errors.Is(err, ErrLocked) {
		t.Errorf("TryAcquire while pi holds the lock = %v, want ErrLocked", err)
	}
	stdin.Close()
	cmd.Wait()
	lk, err = Acquire(context.Background(), file)
	if err != nil {
		t.Fatalf("Acquire after pi released: %v", err)
	}
	lk.Release()
}
