package llm

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Secret is a credential such as an API key. It prints, formats and
// marshals as "[redacted]" whatever the verb, so a key held in a Secret
// cannot reach a log, an error, a session file or a test failure by
// accident; [Secret.Reveal] is the one way to read it, used only where the
// key goes onto the wire.
type Secret string

const redacted = "[redacted]"

// Reveal returns the credential itself.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

// String returns "[redacted]" (or "" for an empty secret).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString returns the redacted form for %#v.
func (s Secret) GoString() string { return fmt.Sprintf("llm.Secret(%q)", s.String()) }

// Format prints the redacted form for every verb.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.String())
}

// MarshalJSONTo writes the redacted form.
func (s Secret) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(s.String()))
}
