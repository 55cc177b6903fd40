package mcp

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// logLevel is the least severe level of the messages logged.
const logLevel sdk.LoggingLevel = "info"

// maxLogSize is the size past which mcp.log is moved to mcp.log.1.
const maxLogSize = 5 << 20

// maxLogMessage bounds the text of one logged message: a server's log can
// be anything it sends, and one message must not fill the log alone.
const maxLogMessage = 8 << 10

// log appends a server's log message to the log file, if there is one.
// A log that cannot be written loses the message: logging never fails a
// server.
func (m *Manager) log(server string, p *sdk.LoggingMessageParams) {
	if m.opts.LogFile == "" || p == nil {
		return
	}
	msg, ok := p.Data.(string)
	if !ok {
		b, err := json.Marshal(p.Data)
		if err != nil {
			return
		}
		msg = string(b)
	}
	if len(msg) > maxLogMessage {
		msg = fmt.Sprintf("%s… (%d bytes cut)", cutAt(msg, maxLogMessage, false), len(msg)-len(cutAt(msg, maxLogMessage, false)))
	}
	line := fmt.Sprintf("%s [%s] %s %s: %s\n", time.Now().UTC().Format(time.RFC3339), server, p.Level, p.Logger,
		strings.ReplaceAll(msg, "\n", "\\n"))
	m.logMu.Lock()
	defer m.logMu.Unlock()
	if fi, err := os.Stat(m.opts.LogFile); err == nil && fi.Size()+int64(len(line)) > maxLogSize {
		_ = os.Rename(m.opts.LogFile, m.opts.LogFile+".1")
	}
	f, err := os.OpenFile(m.opts.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	_ = f.Close()
}
