package agent

import (
	"iter"

	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/session"
)

// HeaderJSON returns the session header's line as it is stored (as pi
// writes it), without its newline: the first line JSON mode writes.
func (a *Agent) HeaderJSON() []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.s.Header().Raw()
}

// LastMessage returns the last message on the session's current path, nil
// when the path holds none (or its entry cannot be read). After a run it
// is the answer, unless the run ended on a tool result.
func (a *Agent) LastMessage() llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	for m, err := range messagesBack(a.s.LeafView()) {
		if err != nil {
			return nil
		}
		return m
	}
	return nil
}

// messagesBack yields the messages of path's message entries from the leaf
// back, each with the error of an entry that cannot be read.
func messagesBack(path session.PathView) iter.Seq2[llm.Message, error] {
	return func(yield func(llm.Message, error) bool) {
		for i := path.Len() - 1; i >= 0; i-- {
			if path.Type(i) != session.TypeMessage {
				continue
			}
			if !yield(path.Entry(i).Message()) {
				return
			}
		}
	}
}
