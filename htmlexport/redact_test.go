package htmlexport

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 end", "key sk-ant-[redacted] end"},
		{"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "OPENAI_API_KEY=[redacted]"},
		{`{"apiKey": "hunter2hunter2"}`, `{"apiKey": "[redacted]"}`},
		{"export GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz", "export GITHUB_TOKEN=[redacted]"},
		{"aws AKIAIOSFODNN7EXAMPLE1234 x", "aws AKIA[redacted] x"},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "Authorization: Bearer [redacted]"},
		{"git clone https://bob:s3cretpass@example.com/x.git", "git clone https://bob:[redacted]@example.com/x.git"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter", "[redacted]\nafter"},
		{"tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "tok [redacted]"},
		{"password: correct-horse-battery", "password: [redacted]"},
		// Not secrets.
		{"the token budget is 20000 tokens", "the token budget is 20000 tokens"},
		{"see https://example.com/path and task-list", "see https://example.com/path and task-list"},
		{"func secretSauce() {}", "func secretSauce() {}"},
	} {
		r := newRedactor(false)
		if got := r.text(c.in); got != c.want {
			t.Errorf("text(%q) = %q, want %q", c.in, got, c.want)
		}
		if off := newRedactor(true); off.text(c.in) != c.in {
			t.Errorf("with redaction off, %q changed", c.in)
		}
	}
}

func TestRedactCounts(t *testing.T) {
	r := newRedactor(false)
	r.text(strings.Repeat("sk-ant-0123456789abcdefghij ", 3) + "sk-ant-0123456789abcdefghik")
	if r.count() != 2 {
		t.Fatalf("count = %d, want 2 (the same value thrice, another once)", r.count())
	}
}
