package agent

import (
	"github.com/prime-agent/prime/llm"
	"github.com/prime-agent/prime/loop"
)

// QueueMode says how many queued messages are delivered at once.
type QueueMode string

// Queue modes (pi's steeringMode and followUpMode).
const (
	// OneAtATime delivers one message at each delivery point (the default).
	OneAtATime QueueMode = "one-at-a-time"
	// All delivers the whole queue at once.
	All QueueMode = "all"
)

// queued is one message waiting to be delivered.
type queued struct {
	text string
	msg  *llm.UserMessage
}

// queue is one of the two queues of messages typed while the agent works.
type queue struct {
	items []queued
	mode  QueueMode
}

// take removes the messages to deliver now.
func (q *queue) take() []queued {
	if len(q.items) == 0 {
		return nil
	}
	n := 1
	if q.mode == All {
		n = len(q.items)
	}
	out := q.items[:n:n]
	q.items = q.items[n:]
	return out
}

func (q *queue) texts() []string {
	out := make([]string, len(q.items))
	for i, it := range q.items {
		out[i] = it.text
	}
	return out
}

func (a *Agent) enqueueLocked(kind Behavior, text string, images []llm.Image) {
	q := &a.conv.followUp
	if kind == Steer {
		q = &a.conv.steering
	}
	q.items = append(q.items, queued{text: text, msg: a.userMessageLocked(text, images)})
}

func (a *Agent) queueUpdateLocked() QueueUpdate {
	return QueueUpdate{Steering: a.conv.steering.texts(), FollowUp: a.conv.followUp.texts()}
}

// ClearQueue empties both queues and returns the texts they held (the TUI
// puts them back in the editor; Escape does so before aborting).
func (a *Agent) ClearQueue() (steering, followUp []string) {
	a.mu.Lock()
	steering, followUp = a.conv.steering.texts(), a.conv.followUp.texts()
	a.conv.steering.items, a.conv.followUp.items = nil, nil
	update := a.queueUpdateLocked()
	a.mu.Unlock()
	if len(steering)+len(followUp) > 0 {
		a.emit(update)
	}
	return steering, followUp
}

// Queued returns the texts waiting in both queues.
func (a *Agent) Queued() (steering, followUp []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conv.steering.texts(), a.conv.followUp.texts()
}

// SetQueueModes sets how many steering and follow-up messages are delivered
// at once; an empty mode leaves that queue's as it is.
func (a *Agent) SetQueueModes(steering, followUp QueueMode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.initFlagsLocked()
	if steering != "" {
		a.conv.steering.mode = steering
	}
	if followUp != "" {
		a.conv.followUp.mode = followUp
	}
}

// QueueModes returns the modes of the two queues.
func (a *Agent) QueueModes() (steering, followUp QueueMode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.initFlagsLocked()
	return a.conv.steering.modeOrDefault(), a.conv.followUp.modeOrDefault()
}

func (q *queue) modeOrDefault() QueueMode {
	if q.mode == "" {
		return OneAtATime
	}
	return q.mode
}

// takeQueued removes what a new run should start with when messages wait
// after a run ended: steering first, else follow-ups.
func (a *Agent) takeQueued() []llm.Message {
	q := (*agentQueue)(a)
	if m := q.Take(loop.Steering); len(m) > 0 {
		return m
	}
	return q.Take(loop.FollowUp)
}

// agentQueue is the agent seen as the loop's Queue.
type agentQueue Agent

// Waiting reports whether a message of kind k waits.
func (q *agentQueue) Waiting(k loop.Kind) bool {
	a := (*Agent)(q)
	a.mu.Lock()
	defer a.mu.Unlock()
	if k == loop.Steering {
		return len(a.conv.steering.items) > 0
	}
	return len(a.conv.followUp.items) > 0
}

// Take removes the messages of kind k to deliver now and tells the front
// ends the queues changed.
func (q *agentQueue) Take(k loop.Kind) []llm.Message {
	a := (*Agent)(q)
	a.mu.Lock()
	from := &a.conv.followUp
	if k == loop.Steering {
		from = &a.conv.steering
	}
	items := from.take()
	update := a.queueUpdateLocked()
	a.mu.Unlock()
	if len(items) == 0 {
		return nil
	}
	a.emit(update)
	out := make([]llm.Message, len(items))
	for i, it := range items {
		out[i] = it.msg
	}
	return out
}
