// Package lockdir locks a file between processes the way pi does, so Prime
// and a running pi never write the same settings file at once.
//
// The protocol is that of the npm package proper-lockfile (4.x), which pi
// uses with realpath off:
//
//   - The lock on FILE is the directory "FILE.lock" (FILE made absolute, not
//     resolved through symbolic links). Creating it with mkdir takes the
//     lock; mkdir is atomic on every file system, network ones included.
//   - The holder touches the directory's modification time every 5 seconds.
//     A lock not touched for 10 seconds is stale: its holder died, and
//     anyone may remove it and take the lock.
//   - Releasing the lock removes the directory.
//
// Locks are advisory: they exclude only writers that take them too.
package lockdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Defaults of proper-lockfile.
const (
	// Stale is how long an untouched lock lasts before anyone may break it.
	Stale = 10 * time.Second
	// Update is how often the holder touches its lock.
	Update = Stale / 2
)

// ErrLocked reports a lock held by another process (and not stale).
var ErrLocked = errors.New("locked by another process")

// ErrCompromised reports a lock that was taken away from its holder while
// held: its directory vanished or another process touched it, because the
// holder stalled for longer than [Stale].
var ErrCompromised = errors.New("lock compromised")

// Locker takes locks. Its zero value uses proper-lockfile's timings.
type Locker struct {
	// Stale and Update override [Stale] and [Update] (tests use short ones).
	Stale, Update time.Duration
	// Poll is how long Acquire waits between attempts; 20ms when zero.
	Poll time.Duration
}

// Lock is a held lock.
type Lock struct {
	dir  string
	stop chan struct{}
	done chan struct{}

	mu          sync.Mutex
	compromised error
}

// Path returns the lock directory for file.
func Path(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	return abs + ".lock", nil
}

// Acquire locks file with the default timings, waiting until the lock is
// free or stale or ctx is done.
func Acquire(ctx context.Context, file string) (*Lock, error) {
	return Locker{}.Acquire(ctx, file)
}

// Acquire locks file, waiting until the lock is free or stale or ctx is
// done. When ctx ends first the error wraps [ErrLocked] and ctx's error.
func (l Locker) Acquire(ctx context.Context, file string) (*Lock, error) {
	poll := l.Poll
	if poll <= 0 {
		poll = 20 * time.Millisecond
	}
	for {
		lk, err := l.TryAcquire(file)
		if !errors.Is(err, ErrLocked) {
			return lk, err
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		case <-t.C:
		}
		// Back off gently up to a quarter of a second between attempts.
		poll = min(poll*3/2, 250*time.Millisecond)
	}
}

// TryAcquire makes one attempt to lock file: it breaks a stale lock, and
// fails with an error wrapping [ErrLocked] when the lock is held.
func (l Locker) TryAcquire(file string) (*Lock, error) {
	dir, err := Path(file)
	if err != nil {
		return nil, err
	}
	stale, update := l.timings()
	checkStale := true
	for {
		err := os.Mkdir(dir, 0o777)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		if !checkStale {
			return nil, fmt.Errorf("lock %s: %w", dir, ErrLocked)
		}
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Released meanwhile: try once more without a stale check, as
			// proper-lockfile does.
		case err != nil:
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		case time.Since(fi.ModTime()) <= stale:
			return nil, fmt.Errorf("lock %s: %w", dir, ErrLocked)
		default:
			if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("lock %s: breaking a stale lock: %w", dir, err)
			}
		}
		checkStale = false
	}
	mtime, err := touch(dir)
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	lk := &Lock{dir: dir, stop: make(chan struct{}), done: make(chan struct{})}
	go lk.refresh(mtime, stale, update)
	return lk, nil
}

func (l Locker) timings() (stale, update time.Duration) {
	stale, update = l.Stale, l.Update
	if stale <= 0 {
		stale = Stale
	}
	if update <= 0 || update > stale/2 {
		update = stale / 2
	}
	return stale, update
}

// touch sets the lock's modification time to now and returns the time the
// file system recorded (it may round it).
func touch(dir string) (time.Time, error) {
	now := time.Now()
	if err := os.Chtimes(dir, now, now); err != nil {
		return time.Time{}, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// refresh keeps the lock fresh until Release, and notices when another
// process has broken it.
func (lk *Lock) refresh(mtime time.Time, stale, update time.Duration) {
	defer close(lk.done)
	t := time.NewTicker(update)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-lk.stop:
			return
		case <-t.C:
		}
		fi, err := os.Stat(lk.dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			lk.setCompromised(fmt.Errorf("lock %s: %w: the lock directory was removed", lk.dir, ErrCompromised))
			return
		case err == nil && !fi.ModTime().Equal(mtime):
			lk.setCompromised(fmt.Errorf("lock %s: %w: another process took it over", lk.dir, ErrCompromised))
			return
		case err != nil:
			if time.Since(last) > stale {
				lk.setCompromised(fmt.Errorf("lock %s: %w: %v", lk.dir, ErrCompromised, err))
				return
			}
			continue
		}
		if m, err := touch(lk.dir); err == nil {
			mtime, last = m, time.Now()
		} else if time.Since(last) > stale {
			lk.setCompromised(fmt.Errorf("lock %s: %w: %v", lk.dir, ErrCompromised, err))
			return
		}
	}
}

func (lk *Lock) setCompromised(err error) {
	lk.mu.Lock()
	lk.compromised = err
	lk.mu.Unlock()
}

// Err returns an error wrapping [ErrCompromised] if the lock has been taken
// away from its holder, else nil. A writer checks it just before making its
// change visible.
func (lk *Lock) Err() error {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.compromised
}

// Release gives the lock up. It returns an error wrapping [ErrCompromised]
// when the lock had been taken away, and then leaves the new holder's
// directory alone.
func (lk *Lock) Release() error {
	close(lk.stop)
	<-lk.done
	if err := lk.Err(); err != nil {
		return err
	}
	if err := os.Remove(lk.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unlock %s: %w", lk.dir, err)
	}
	return nil
}
