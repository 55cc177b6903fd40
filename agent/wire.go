package agent

import (
	"errors"

	"github.com/prime-agent/prime/compaction"
)

// CompactionErrorText is the text of a failed compaction as pi words it:
// the error after "Compaction failed: " (manual), "Auto-compaction failed: "
// (threshold) or "Context overflow recovery failed: " (overflow); a recovery
// that already failed once is said as it is.
func CompactionErrorText(reason Reason, err error) string {
	if errors.Is(err, ErrRecoveryFailed) {
		return err.Error()
	}
	var nc *compaction.NotCompactableError
	if errors.As(err, &nc) {
		return "Compaction failed: " + err.Error()
	}
	switch reason {
	case ReasonThreshold:
		return "Auto-compaction failed: " + err.Error()
	case ReasonOverflow:
		return "Context overflow recovery failed: " + err.Error()
	default:
		return "Compaction failed: " + err.Error()
	}
}
