package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/prime-agent/prime/agent"
	"github.com/prime-agent/prime/agentjson"
	"github.com/prime-agent/prime/internal/jsonwire"
)

// Reviewing and undoing compactions (Prime's additions to the protocol).

// uncompact undoes the compaction {compactionId} (the latest on the path
// when absent) and answers as the compaction_undone event it emits. A run,
// a compaction or a navigation under way is aborted first, and answered
// before this command is; a command naming no compaction the session has
// is refused before anything is aborted.
func (s *Server) uncompact(ctx context.Context, c *command) ([]byte, error) {
	id, _ := c.optStr("compactionId")
	if c.err != nil {
		return nil, c.err
	}
	if _, err := s.ag.Receipt(id); err != nil {
		return nil, compactionErr(id, err)
	}
	s.ag.Abort()
	s.ops.Wait()
	res, err := s.ag.Uncompact(ctx, id)
	if err != nil {
		return nil, compactionErr(id, err)
	}
	return agentjson.MarshalUncompactResult(res)
}

// compactionReceipt answers the receipt of the compaction {compactionId}
// (the latest on the path when absent).
func (s *Server) compactionReceipt(ctx context.Context, c *command) ([]byte, error) {
	id, _ := c.optStr("compactionId")
	if c.err != nil {
		return nil, c.err
	}
	r, err := s.ag.Receipt(id)
	if err != nil {
		return nil, compactionErr(id, err)
	}
	return receiptData(r)
}

// compactionErr words the failure to find a compaction: an unknown id in
// pi's framing, else the agent's reason.
func compactionErr(id string, err error) error {
	if errors.Is(err, agent.ErrEntryNotFound) {
		return fmt.Errorf("Entry not found: %s", id)
	}
	return err
}

// receiptData is get_compaction_receipt's answer: what the entry holds
// (entryId, tokensBefore, instructions, fromHook, deterministic and why,
// usage) and, when Prime recorded them, its "receipt" and "ledgerCheck" as
// the entry's details store them.
func receiptData(r *agent.Receipt) ([]byte, error) {
	return encode(func(w *jsonwire.ObjectWriter) {
		w.Str("entryId", r.EntryID)
		w.Int("tokensBefore", int64(r.TokensBefore))
		w.OptStr("instructions", r.Instructions)
		w.Bool("fromHook", r.FromHook)
		w.Bool("deterministic", r.Deterministic)
		w.OptStr("deterministicReason", r.DeterministicReason)
		if r.Usage != nil {
			w.Value("usage", r.Usage)
		}
		if r.Recorded {
			w.Value("receipt", r.Receipt)
		}
		if r.Ledger != nil {
			w.Value("ledgerCheck", r.Ledger)
		}
	})
}
