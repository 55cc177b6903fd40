package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/llm/retry"
)

// failing returns an op that fails with errs in turn, then succeeds, and
// records the fake time of every attempt relative to start.
func failing(start time.Time, at *[]time.Duration, errs ...error) func(context.Context) error {
	i := 0
	return func(context.Context) error {
		*at = append(*at, time.Since(start))
		if i < len(errs) {
			i++
			return errs[i-1]
		}
		return nil
	}
}

func apiErr(status int, after time.Duration) error {
	return llm.NewAPIError("test", status, "", "boom", after)
}

func TestDo(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		errs    []error
		policy  retry.Policy
		wantAt  []time.Duration
		wantErr bool
	}{
		{"success first time", nil, retry.DefaultPolicy(), []time.Duration{0}, false},
		{"exponential backoff", []error{apiErr(500, 0), apiErr(529, 0), apiErr(429, 0)}, retry.DefaultPolicy(),
			[]time.Duration{0, 2 * s, 6 * s, 14 * s}, false},
		{"retries run out", []error{apiErr(500, 0), apiErr(500, 0), apiErr(500, 0), apiErr(500, 0)}, retry.DefaultPolicy(),
			[]time.Duration{0, 2 * s, 6 * s, 14 * s}, true},
		{"retry-after honoured", []error{apiErr(429, 17*s)}, retry.DefaultPolicy(),
			[]time.Duration{0, 17 * s}, false},
		{"retry-after above cap fails at once", []error{apiErr(429, 120*s)}, retry.DefaultPolicy(),
			[]time.Duration{0}, true},
		{"backoff capped", []error{apiErr(500, 0), apiErr(500, 0), apiErr(500, 0)},
			retry.Policy{MaxRetries: 5, BaseDelay: 2 * s, MaxDelay: 3 * s},
			[]time.Duration{0, 2 * s, 5 * s, 8 * s}, false},
		{"overflow never retried", []error{apiErr(413, 0)}, retry.DefaultPolicy(), []time.Duration{0}, true},
		{"overflow wording on a 500 never retried",
			[]error{llm.NewAPIError("test", 500, "", "prompt is too long: 300000 tokens > 200000 maximum", 0)},
			retry.DefaultPolicy(), []time.Duration{0}, true},
		{"auth failure not retried", []error{apiErr(401, 0)}, retry.DefaultPolicy(), []time.Duration{0}, true},
		{"bad request not retried", []error{apiErr(400, 0)}, retry.Policy{MaxRetries: 3, BaseDelay: s}, []time.Duration{0}, true},
		{"connection error retried", []error{&llm.APIError{Provider: "test", Message: "reset", Kind: llm.ErrConnection}}, retry.DefaultPolicy(),
			[]time.Duration{0, 2 * s}, false},
		{"zero retries", []error{apiErr(500, 0)}, retry.Policy{}, []time.Duration{0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var at []time.Duration
				err := retry.Do(t.Context(), tt.policy, llm.RetryDecision, failing(time.Now(), &at, tt.errs...))
				if (err != nil) != tt.wantErr {
					t.Fatalf("err = %v, want error %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.wantAt, at); diff != "" {
					t.Errorf("attempt times (-want +got):\n%s", diff)
				}
				if err != nil && len(tt.errs) > 0 && !errors.Is(err, errors.Unwrap(tt.errs[len(at)-1])) {
					t.Errorf("err %v does not keep its class", err)
				}
			})
		})
	}
}

func TestDoCancelDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		var at []time.Duration
		err := retry.Do(ctx, retry.DefaultPolicy(), llm.RetryDecision, failing(start, &at, apiErr(503, 0), apiErr(503, 0)))
		if !errors.Is(err, context.Canceled) || !errors.Is(err, llm.ErrServer) {
			t.Fatalf("err = %v, want both the server error and context.Canceled", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("returned after %v, want 1s", got)
		}
		if len(at) != 1 {
			t.Errorf("%d attempts, want 1", len(at))
		}
	})
}

func TestOnRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		p := retry.DefaultPolicy()
		p.OnRetry = func(n int, d time.Duration, err error) { got = append(got, fmt.Sprint(n, " ", d)) }
		var at []time.Duration
		if err := retry.Do(t.Context(), p, llm.RetryDecision, failing(time.Now(), &at, apiErr(500, 0), apiErr(429, 5*time.Second))); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"1 2s", "2 5s"}, got); diff != "" {
			t.Error(diff)
		}
	})
}
