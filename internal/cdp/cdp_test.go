package cdp

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFindHonoursTheEnvironment(t *testing.T) {
	t.Setenv("PRIME_CHROMIUM", "/opt/some/chromium")
	if p, err := Find(); err != nil || p != "/opt/some/chromium" {
		t.Errorf("Find() = %q, %v", p, err)
	}
	t.Setenv("PRIME_CHROMIUM", "")
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(); !errors.Is(err, ErrNoBrowser) {
		t.Errorf("with no browser on PATH: %v", err)
	}
}

func TestLaunchMissingBinary(t *testing.T) {
	if _, err := Launch(context.Background(), "/nonexistent/chromium"); err == nil {
		t.Fatal("launching a missing binary succeeded")
	}
}

// TestCallWhenTheBrowserIsGone: a command to a process that is not a
// browser (it exits at once) fails, and does not hang.
func TestCallWhenTheBrowserIsGone(t *testing.T) {
	b, err := Launch(context.Background(), "/bin/true")
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Call(ctx, "", "Browser.getVersion", nil, nil); err == nil || ctx.Err() != nil {
		t.Errorf("Call to an exited process: %v (context: %v)", err, ctx.Err())
	}
}
