package agent

import "context"

// StartCompact begins a manual compaction as [Agent.Compact] does and returns
// as soon as the agent is busy with it (a reply being streamed has been
// aborted by then): whatever is asked of the agent next finds the compaction
// under way, so a prompt is refused with ErrCompacting and [Agent.Abort]
// cancels it. The compaction goes on on a goroutine of the agent's, which
// ends with it; wait blocks until then and returns what Compact would have.
// An error means nothing began.
//
// A front end that takes commands one after another (RPC mode) uses it so
// that the command sent after a compaction is handled once it has begun,
// without waiting for it to end.
func (a *Agent) StartCompact(ctx context.Context, req CompactRequest) (wait func() (*CompactionResult, error), err error) {
	ctx, release, err := a.beginManual(ctx, true)
	if err != nil {
		return nil, err
	}
	return inBackground(func() (*CompactionResult, error) {
		defer release()
		return a.compactBegun(ctx, req)
	}), nil
}

// StartNavigate is to [Agent.Navigate] what [Agent.StartCompact] is to
// Compact: it returns once the agent is busy with the navigation (and its
// summary), which goes on on a goroutine of the agent's; wait returns its
// outcome.
func (a *Agent) StartNavigate(ctx context.Context, req NavigateRequest) (wait func() (*NavigationResult, error), err error) {
	ctx, release, err := a.beginManual(ctx, req.Summarize)
	if err != nil {
		return nil, err
	}
	return inBackground(func() (*NavigationResult, error) {
		defer release()
		return a.navigateBegun(ctx, req)
	}), nil
}

// inBackground runs f on a goroutine that ends when f returns, and returns
// the function that waits for its result.
func inBackground[T any](f func() (T, error)) func() (T, error) {
	done := make(chan struct{})
	var res T
	var err error
	go func() {
		defer close(done)
		res, err = f()
	}()
	return func() (T, error) {
		<-done
		return res, err
	}
}
