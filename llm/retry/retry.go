// Package retry runs an operation again after transient failures, with
// exponential backoff that honours the delay a server asks for.
//
// The policy is pi's: a few retries (3 by default) after a base delay that
// doubles each time (2 s, 4 s, 8 s), each delay capped; when the server asks
// for a longer wait than the cap allows, the failure is returned at once
// instead of keeping the user waiting silently. Which failures are
// transient is the caller's decision ([Classifier]); for providers it is
// llm.RetryDecision, which never retries a context overflow.
package retry

import (
	"context"
	"fmt"
	"time"
)

// Policy says how often and how long to wait between attempts.
type Policy struct {
	// MaxRetries is the number of attempts after the first; 0 never retries.
	MaxRetries int
	// BaseDelay is the wait before the first retry, doubled for each later
	// one.
	BaseDelay time.Duration
	// MaxDelay caps every wait. A server asking for a longer one ends the
	// retries with its error. 0 means no cap.
	MaxDelay time.Duration
	// OnRetry, when set, is told before each wait (for a "retrying in 4s"
	// notice). attempt counts retries from 1.
	OnRetry func(attempt int, delay time.Duration, err error)
}

// DefaultPolicy returns pi's defaults: 3 retries, 2 s doubling, 60 s cap.
func DefaultPolicy() Policy {
	return Policy{MaxRetries: 3, BaseDelay: 2 * time.Second, MaxDelay: 60 * time.Second}
}

// Classifier decides whether a failure may succeed if tried again, and the
// delay the server asked for (0 when it named none).
type Classifier func(err error) (retry bool, after time.Duration)

// Do calls op until it succeeds, fails in a way classify calls permanent,
// the retries run out, or ctx is cancelled. It returns op's last error; a
// cancellation during a wait returns the last error joined with ctx's.
func Do(ctx context.Context, p Policy, classify Classifier, op func(ctx context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		retry, after := classify(err)
		if !retry || attempt >= p.MaxRetries {
			return err
		}
		delay, ok := p.delay(attempt, after)
		if !ok {
			return fmt.Errorf("%w (the server asked to wait %v, longer than the %v limit)", err, after.Round(time.Second), p.MaxDelay)
		}
		if p.OnRetry != nil {
			p.OnRetry(attempt+1, delay, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w; gave up waiting to retry: %w", err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// delay returns the wait before retry number attempt+1, and false when the
// server asked for more than the cap.
func (p Policy) delay(attempt int, after time.Duration) (time.Duration, bool) {
	if after > 0 {
		if p.MaxDelay > 0 && after > p.MaxDelay {
			return 0, false
		}
		return after, true
	}
	d := p.BaseDelay
	for range attempt {
		if p.MaxDelay > 0 && d >= p.MaxDelay {
			break
		}
		d *= 2
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d, true
}
