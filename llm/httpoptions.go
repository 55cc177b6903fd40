package llm

import (
	"net/http"
	"time"

	"github.com/prime-agent/prime/llm/retry"
)

// HTTPOptions are how a provider sends its requests; every provider's
// Config embeds them.
type HTTPOptions struct {
	// Headers are sent with every request (a model's own headers win).
	Headers map[string]string
	// HTTPClient sends the requests; default http.DefaultClient.
	HTTPClient *http.Client
	// Retry is the policy for rate limits, overloads, 5xx and connection
	// failures before the stream starts; nil means retry.DefaultPolicy.
	Retry *retry.Policy
	// Now stamps each turn; default time.Now.
	Now func() time.Time
	// IdleTimeout is how long the server may send nothing (before the
	// response, or mid-stream) before the turn fails as a broken
	// connection; 0 means the request's StreamBounds, else five minutes; a
	// negative value means no limit.
	IdleTimeout time.Duration
}
