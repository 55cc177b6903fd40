// Package pioracle lets tests ask pi itself: it runs the harness in
// harness/ beside it, which calls pi's own functions on a session file and
// answers in JSON. Tests that use it are opt-in: they run only when PRIME_PIORACLE
// names the harness's wrapper, and skip otherwise, so that the test suite
// never needs node or the network.
//
//	PRIME_PIORACLE=$PWD/internal/pioracle/harness/pioracle go test ./... -run PiOracle
package pioracle

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Path returns the wrapper PRIME_PIORACLE names, a relative name being
// resolved against the module root (go test runs each package in its own
// directory). It skips the test when the variable is unset.
func Path(tb testing.TB) string {
	tb.Helper()
	bin := os.Getenv("PRIME_PIORACLE")
	if bin == "" {
		tb.Skip("PRIME_PIORACLE not set: not comparing with pi")
	}
	if filepath.IsAbs(bin) {
		return bin
	}
	root, err := moduleRoot()
	if err != nil {
		tb.Fatalf("PRIME_PIORACLE=%s: %v", bin, err)
	}
	return filepath.Join(root, bin)
}

// Ask runs the wrapper with args and decodes its answer into out. An answer
// with an "error" member fails the test, with the oracle's words.
func Ask(tb testing.TB, out any, args ...string) {
	tb.Helper()
	cmd := exec.Command(Path(tb), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		tb.Fatalf("pioracle %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(stdout, &failed) == nil && failed.Error != "" {
		tb.Fatalf("pioracle %s: %s", strings.Join(args, " "), failed.Error)
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		tb.Fatalf("pioracle %s: answer does not decode: %v", strings.Join(args, " "), err)
	}
}

// moduleRoot returns the nearest directory above the working directory
// that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Batch asks the wrapper's batch subcommand every request at once (one
// process for them all) and returns the answers in order, each still to be
// decoded. It fails the test when the oracle fails or answers fewer.
func Batch(tb testing.TB, requests []any) []jsontext.Value {
	tb.Helper()
	var in bytes.Buffer
	for _, r := range requests {
		b, err := json.Marshal(r)
		if err != nil {
			tb.Fatal(err)
		}
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command(Path(tb), "batch")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("pioracle batch: %v\n%s", err, stderr.Bytes())
	}
	var answers []jsontext.Value
	for line := range bytes.Lines(out) {
		answers = append(answers, jsontext.Value(bytes.TrimSuffix(line, []byte("\n"))))
	}
	if len(answers) != len(requests) {
		tb.Fatalf("pioracle batch answered %d of %d requests", len(answers), len(requests))
	}
	return answers
}
