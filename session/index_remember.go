package session

import (
	"weak"

	"github.com/prime-agent/prime/llm"

	"github.com/prime-agent/prime/session/internal/rawmem"
)

// An entry remembers the message last decoded from it through a weak
// reference: the message is found again while something else keeps it
// alive, and collected otherwise, so an entry never holds on to a decoded
// copy of itself (a long session would otherwise keep its whole compacted
// history decoded in memory).
//
// Weak references cost the runtime a record per referenced object, which
// for a context of many messages was a tenth of the time spent decoding
// them. So the messages decoded together (decodeBatch) are allocated
// together, one array per message type, and each entry refers weakly to
// its array and to its place in it: the array lives as long as any of its
// messages does (a pointer to an element keeps the whole array alive), so
// an entry finds its message exactly while the message is in use, as with
// a reference of its own. A message decoded on its own is an array of one.

// messageRef locates the message last decoded from an entry.
type messageRef struct {
	slab  slabRef
	index int
}

// get returns the message if it is still in use, else nil.
func (r *messageRef) get() Message { return r.slab.at(r.index) }

// slabRef is a weak reference to an array of decoded messages of one type.
type slabRef interface {
	// at returns element i, or nil when the array has been collected.
	at(i int) Message
}

// slab is a weak reference to the first of n messages of type T allocated
// as one array.
type slab[T any, PT interface {
	*T
	Message
}] struct {
	first weak.Pointer[T]
	n     int
}

// weakSlab makes a weak reference to the n messages of an array starting at
// first.
func weakSlab[T any, PT interface {
	*T
	Message
}](first PT, n int) *slab[T, PT] {
	return &slab[T, PT]{first: weak.Make((*T)(first)), n: n}
}

func (s *slab[T, PT]) at(i int) Message {
	p := s.first.Value()
	if p == nil {
		return nil
	}
	// p points to the first element of a live array of s.n elements:
	// holding p keeps the array alive, and i < s.n.
	return PT(&rawmem.ArrayAt(p, s.n)[i])
}

// remember records m, decoded on its own, as the message decoded from e.
func (e *Entry) remember(m Message) {
	var s slabRef
	switch m := m.(type) {
	case *llm.UserMessage:
		s = weakSlab(m, 1)
	case *llm.AssistantMessage:
		s = weakSlab(m, 1)
	case *llm.ToolResultMessage:
		s = weakSlab(m, 1)
	case *BashExecution:
		s = weakSlab(m, 1)
	case *CustomMessage:
		s = weakSlab(m, 1)
	case *BranchSummaryMessage:
		s = weakSlab(m, 1)
	case *CompactionSummaryMessage:
		s = weakSlab(m, 1)
	case *SystemMessage:
		s = weakSlab(m, 1)
	default:
		return
	}
	e.decoded.Store(&messageRef{slab: s})
}

// remembered returns the message decoded from e if it is still in use.
func (e *Entry) remembered() Message {
	if r := e.decoded.Load(); r != nil {
		return r.get()
	}
	return nil
}

// messageArena hands out the messages of one batch from one array per
// provider role. A nil arena allocates each message on its own.
type messageArena struct {
	users      []llm.UserMessage
	assistants []llm.AssistantMessage
	results    []llm.ToolResultMessage
}

func (a *messageArena) user() *llm.UserMessage {
	if a == nil || len(a.users) == cap(a.users) {
		return new(llm.UserMessage)
	}
	a.users = a.users[:len(a.users)+1]
	return &a.users[len(a.users)-1]
}

func (a *messageArena) assistant() *llm.AssistantMessage {
	if a == nil || len(a.assistants) == cap(a.assistants) {
		return new(llm.AssistantMessage)
	}
	a.assistants = a.assistants[:len(a.assistants)+1]
	return &a.assistants[len(a.assistants)-1]
}

func (a *messageArena) result() *llm.ToolResultMessage {
	if a == nil || len(a.results) == cap(a.results) {
		return new(llm.ToolResultMessage)
	}
	a.results = a.results[:len(a.results)+1]
	return &a.results[len(a.results)-1]
}

// decodeBatch puts in msgs[i] the context message of entries[i] (see
// [ContextMessage]), and returns the error of the first entry that cannot
// be decoded. Messages still in use are taken as they are; the lines of
// the others are read back together; the provider messages the fast
// decoder reads are allocated in one array per role and remembered
// through one weak reference per array; anything else is decoded on its
// own.
func decodeBatch(entries []*Entry, msgs []Message, common *sharedArena) (err error) {
	var lines [maxBatch][]byte
	var need [maxBatch]bool
	for i, e := range entries {
		if contributesType(e.Type) {
			msgs[i] = e.remembered()
			need[i] = msgs[i] == nil
		}
	}
	if err := readEntryLines(entries, need[:len(entries)], lines[:len(entries)]); err != nil {
		return err
	}
	var nu, na, nr int
	for i, e := range entries {
		if !need[i] || e.Type != TypeMessage {
			continue
		}
		if raw, ok := lastMember(lines[i], e.head, `,"message":`); ok {
			switch role, _ := fastRole(raw); role {
			case llm.RoleUser:
				nu++
			case llm.RoleAssistant:
				na++
			case llm.RoleToolResult:
				nr++
			}
		}
	}
	arena := &messageArena{
		users:      make([]llm.UserMessage, 0, nu),
		assistants: make([]llm.AssistantMessage, 0, na),
		results:    make([]llm.ToolResultMessage, 0, nr),
	}
	// at[i] is the place in its array of a message the arena handed out,
	// or -1.
	var at [maxBatch]int32
	for i, e := range entries {
		at[i] = -1
		if !need[i] {
			continue
		}
		var decodeErr error
		if e.Type != TypeMessage {
			msgs[i], decodeErr = contextMessageOf(e, lines[i])
		} else if m, ok := decodeArena(e, lines[i], arena, common, &at[i]); ok {
			msgs[i] = m
		} else if m, err := e.decodeMessage(lines[i]); err == nil {
			e.remember(m)
			msgs[i] = m
		} else {
			decodeErr = err
		}
		if isUnreadable(decodeErr) {
			msgs[i], decodeErr = nil, nil // left out of the context, told as a warning
		}
		if decodeErr != nil && err == nil {
			err = decodeErr
		}
	}
	var slabs [3]slabRef
	if len(arena.users) > 0 {
		slabs[0] = weakSlab(&arena.users[0], len(arena.users))
	}
	if len(arena.assistants) > 0 {
		slabs[1] = weakSlab(&arena.assistants[0], len(arena.assistants))
	}
	if len(arena.results) > 0 {
		slabs[2] = weakSlab(&arena.results[0], len(arena.results))
	}
	n := 0
	for i := range entries {
		if at[i] >= 0 {
			n++
		}
	}
	refs := make([]messageRef, 0, n)
	for i, e := range entries {
		if at[i] < 0 {
			continue
		}
		var s slabRef
		switch msgs[i].(type) {
		case *llm.UserMessage:
			s = slabs[0]
		case *llm.AssistantMessage:
			s = slabs[1]
		case *llm.ToolResultMessage:
			s = slabs[2]
		}
		refs = append(refs, messageRef{slab: s, index: int(at[i])})
		e.decoded.Store(&refs[len(refs)-1])
	}
	return err
}

// readEntryLines reads back the lines of the entries marked in need into
// lines, those of one source together.
func readEntryLines(entries []*Entry, need []bool, lines [][]byte) error {
	var spans [maxBatch]span
	var idx [maxBatch]int
	var out [maxBatch][]byte
	done := 0
	for done < len(entries) {
		var src *source
		n := 0
		for i, e := range entries {
			if !need[i] || lines[i] != nil {
				continue
			}
			if src == nil {
				src = e.src
			}
			if e.src == src {
				spans[n], idx[n] = e.span(), i
				n++
			}
		}
		if n == 0 {
			return nil
		}
		if src == nil {
			return entries[idx[0]].errorf("entry has no line")
		}
		if err := src.readSpans(spans[:n], out[:n]); err != nil {
			return entries[idx[0]].errorf("%w", err)
		}
		for k := range n {
			lines[idx[k]] = out[k]
		}
		done += n
	}
	return nil
}

// decodeArena decodes the message of e, whose line is line, with the fast
// decoder, taking the message from arena and setting *at to its place in
// its array; a message the arena has no room for is remembered on its own
// (*at stays -1). ok is false when the fast decoder does not take the
// message.
func decodeArena(e *Entry, line []byte, arena *messageArena, common *sharedArena, at *int32) (Message, bool) {
	raw, ok := lastMember(line, e.head, `,"message":`)
	if !ok {
		return nil, false
	}
	u, a, r := len(arena.users), len(arena.assistants), len(arena.results)
	m, ok := fastDecode(raw, true, arena, common)
	if !ok {
		return nil, false
	}
	switch {
	case len(arena.users) > u:
		*at = int32(u)
	case len(arena.assistants) > a:
		*at = int32(a)
	case len(arena.results) > r:
		*at = int32(r)
	default:
		e.remember(m)
	}
	return m, true
}

// maxBatch is the most entries decodeBatch takes at once.
const maxBatch = 64
