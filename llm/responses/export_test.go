package responses

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/llm"
)

// Endpoint exposes the URL a provider posts to, for tests.
func Endpoint(cfg Config, m llm.Model) string { return New(cfg).endpoint(m) }

func jsonValid(s string) bool { return jsontextValid([]byte(s)) }

func jsontextValid(b []byte) bool { return jsontext.Value(b).IsValid() }
