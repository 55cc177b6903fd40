package gemini

import "github.com/prime-agent/prime/llm"

// Endpoint exposes the URL a provider posts to, for tests.
func Endpoint(cfg Config, m llm.Model) string { return New(cfg).endpoint(m) }
