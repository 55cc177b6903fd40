package main

import (
	"context"
	"fmt"

	"github.com/prime-agent/prime/rpc"
)

// runRPC runs RPC mode: pi's JSON-lines protocol on standard input and
// output (package rpc), diagnostics on standard error, no session header.
// The session is chosen as in the other modes; @file arguments and messages
// have no place here (the client sends prompts). The exit status is 0 at the
// end of input, the signal's when one stopped it, 1 when the model cannot be
// chosen or the client went away.
func runRPC(ctx context.Context, a *app, f *chatFlags) int {
	if len(f.files) > 0 {
		fmt.Fprintf(a.stderr, "prime: @%s: @file arguments are not taken in RPC mode; send the file's text in a prompt command\n", f.files[0])
		return exitFailed
	}
	if len(f.messages) > 0 {
		return a.fail("prime", usageErrorf("--mode rpc takes its messages as prompt commands on standard input, not as arguments"))
	}
	ch, err := openChat(ctx, a, f)
	if err != nil {
		return a.fail("prime", err)
	}
	defer ch.close()
	srv := rpc.New(a.stdout, rpc.Options{
		Stderr:     a.stderr,
		AbortAtEOF: f.abortAtEOF,
	})
	ch.out = srv.Event
	// As pi does, RPC mode starts only with a model to talk to.
	if _, err := ch.ag.Model(ctx); err != nil {
		return a.fail("prime", err)
	}
	err = srv.Serve(ctx, ch.ag, a.stdin)
	switch {
	case ctx.Err() != nil:
		return a.interruptStatus()
	case err != nil:
		fmt.Fprintf(a.stderr, "prime: %v\n", err)
		return exitFailed
	}
	return exitOK
}
