package session

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prime-agent/prime/internal/jsonscan"
	"github.com/prime-agent/prime/internal/jsonwire"
	"github.com/prime-agent/prime/llm"
)

// The fast message decoder reads the three provider roles (user, assistant,
// toolResult: nearly every message of a session) in one pass over the raw
// bytes, several times faster than the general decoder, which reads each
// content block twice through the tokenizer and reflection. Decoding the
// messages of a path is most of the cost of building its context and of
// preparing a compaction.
//
// It handles exactly the shapes pi and Prime write, and gives up (ok false)
// on anything else: another role or a role that is not the first member,
// invalid UTF-8 or lone surrogates in a string it decodes, null or a
// repeated member where a block or a usage expects a value, a malformed
// value. The caller then decodes with the general decoder, which decides.
// So the fast path never changes a result, only its cost; FuzzFastDecode
// checks that on arbitrary input, and the tests on every generated session
// and on pi's own files.

// decodeFast decodes a stored user, assistant or tool-result message. The
// message is independent of raw.
func decodeFast(raw []byte) (Message, bool) {
	return fastDecode(raw, false, nil, nil)
}

// decodeFastShared is decodeFast for the immutable bytes of an entry: the
// message shares raw's memory (see [sharedString]) for every string without
// escapes, tool-call arguments in JSON.stringify's form, tool-result
// details and unknown blocks, instead of copying them.
func decodeFastShared(raw []byte) (Message, bool) {
	return fastDecode(raw, true, nil, nil)
}

// fastDecode is decodeFast, or decodeFastShared when shared is set, taking
// the message from arena (nil: a new one) and, when common is not nil, the
// text of strings with escapes and the content lists from common (see
// [sharedArena]; only with shared).
//
// It is a documented hot loop, left over 100 lines on purpose: every
// message a context is built from passes through it (BenchmarkDecodeMessages,
// BenchmarkOpenToContext), and the three roles' member switches sit side by
// side so each can be read against the other two and the wire format;
// splitting them would only move the same closures into helpers.
func fastDecode(raw []byte, shared bool, arena *messageArena, common *sharedArena) (Message, bool) {
	role, ok := fastRole(raw)
	if !ok {
		return nil, false
	}
	d := fastDecoder{b: raw, i: len(`{"role":"`) + len(role) + 1, shared: shared, common: common}
	if common != nil {
		d.out = textBuffer{buf: common.text, arena: true}
		defer func() { common.text = d.out.buf }()
	} else {
		bp, _ := scratch.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		d.out.buf = (*bp)[:0]
		defer func() {
			if cap(d.out.buf) <= maxScratch {
				*bp = d.out.buf
				scratch.Put(bp)
			}
		}()
	}
	var m Message
	switch role {
	case llm.RoleUser:
		u := arena.user()
		ok = d.members(func(name []byte) bool {
			switch string(name) {
			case "content":
				return d.content(&u.Content)
			case "timestamp":
				return d.millis(&u.Timestamp)
			}
			return d.skip()
		})
		m = u
	case llm.RoleAssistant:
		a := arena.assistant()
		ok = d.members(func(name []byte) bool {
			switch string(name) {
			case "content":
				return d.content(&a.Content)
			case "api":
				return d.optString(&a.API)
			case "provider":
				return d.optString(&a.Provider)
			case "model":
				return d.optString(&a.Model)
			case "responseId":
				return d.optString(&a.ResponseID)
			case "usage":
				return d.usage(&a.Usage)
			case "stopReason":
				var s string
				ok := d.optString(&s)
				a.StopReason = llm.StopReason(s)
				return ok
			case "errorMessage":
				return d.optString(&a.ErrorMessage)
			case "timestamp":
				return d.millis(&a.Timestamp)
			case "durationMs":
				return d.millis(&a.DurationMs)
			case "thinkingLevel":
				var s string
				ok := d.optString(&s)
				a.ThinkingLevel = llm.ThinkingLevel(s)
				return ok
			}
			return d.skip()
		})
		m = a
	case llm.RoleToolResult:
		r := arena.result()
		ok = d.members(func(name []byte) bool {
			switch string(name) {
			case "toolCallId":
				return d.optString(&r.ToolCallID)
			case "toolName":
				return d.optString(&r.ToolName)
			case "content":
				return d.content(&r.Content)
			case "details":
				return d.optValue(&r.Details)
			case "nestedCalls":
				return d.optValue(&r.NestedCalls)
			case "isError":
				return d.optBool(&r.IsError)
			case "durationMs":
				return d.millis(&r.DurationMs)
			case "timestamp":
				return d.millis(&r.Timestamp)
			}
			return d.skip()
		})
		m = r
	default:
		return nil, false
	}
	if !ok {
		return nil, false
	}
	d.space()
	if d.i != len(d.b) {
		return nil, false
	}
	return m, true
}

// scratch holds the buffers strings with escapes are built in when they
// are copied out, so that decoding many messages does not grow a new one
// for each.
var scratch sync.Pool

// maxScratch is the largest buffer kept for reuse.
const maxScratch = 1 << 20

// fastDecoder reads JSON from b at i. Every method reports false when the
// input is not in the shape it handles, leaving i anywhere.
type fastDecoder struct {
	b []byte
	i int
	// out receives the text of strings with escapes.
	out textBuffer
	// shared is set when b is immutable, so that what is decoded may
	// share its memory.
	shared bool
	// common, when not nil, provides the content lists (and out's
	// blocks).
	common *sharedArena
}

// contentList returns blocks, which may be scratch, as a message's content.
func (d *fastDecoder) contentList(blocks []llm.Content) []llm.Content {
	switch {
	case len(blocks) == 0:
		return []llm.Content{}
	case d.common != nil:
		return d.common.contentList(blocks)
	}
	return slices.Clone(blocks)
}

// value returns v, part of b, as a value of the message: v itself (its
// capacity capped, so an append cannot write into b) when b is shared, else
// a copy.
func (d *fastDecoder) value(v jsontext.Value) jsontext.Value {
	if d.shared {
		return v[:len(v):len(v)]
	}
	return v.Clone()
}

// text returns b, part of d.b, as a string: sharing its memory when d.b is
// shared, else a copy.
func (d *fastDecoder) text(b []byte) string {
	if d.shared {
		return sharedString(b)
	}
	return string(b)
}

func (d *fastDecoder) space() { d.i = skipSpace(d.b, d.i) }

// next skips white space and reports whether the next byte is c,
// consuming it if so.
func (d *fastDecoder) next(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *fastDecoder) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// members reads the rest of an object after its first member: a comma and
// more members, or the closing brace. For each member it reads the name
// and calls member, which must consume the value.
func (d *fastDecoder) members(member func(name []byte) bool) bool {
	if d.next('}') {
		return true
	}
	if !d.next(',') {
		return false
	}
	return d.object(member)
}

// object reads members up to and including the closing brace, starting at
// the first member's name.
func (d *fastDecoder) object(member func(name []byte) bool) bool {
	for {
		name, ok := d.name()
		if !ok || !d.next(':') {
			return false
		}
		d.space()
		if !member(name) {
			return false
		}
		if d.next(',') {
			continue
		}
		return d.next('}')
	}
}

// name reads a member name. Names with escapes are left to the general
// decoder.
func (d *fastDecoder) name() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	n := bytes.IndexByte(d.b[d.i:], '"')
	if n < 0 {
		return nil, false
	}
	name := d.b[d.i : d.i+n]
	for _, c := range name {
		if c == '\\' || c < 0x20 {
			return nil, false
		}
	}
	d.i += n + 1
	return name, true
}

// skip consumes any valid JSON value; it gives up on one nested too deep
// for walk, as on an invalid one.
func (d *fastDecoder) skip() bool {
	v := newValidator(d.b, d.i)
	if v.walk(false) != walkOK {
		return false
	}
	d.i = v.i
	return true
}

// optString reads a string, or null as "" (as jsonwire.ReadString does).
func (d *fastDecoder) optString(dst *string) bool {
	if d.literal("null") {
		*dst = ""
		return true
	}
	return d.string(dst)
}

// optValue reads any value into dst as it is; null leaves dst as it is
// (as the tool result's general decoder reads details and nestedCalls).
func (d *fastDecoder) optValue(dst *jsontext.Value) bool {
	start := d.i
	if !d.skip() {
		return false
	}
	if v := jsontext.Value(d.b[start:d.i]); v.Kind() != 'n' {
		*dst = d.value(v)
	}
	return true
}

// optBool reads a boolean, or null as false (as jsonwire.ReadBool does).
func (d *fastDecoder) optBool(dst *bool) bool {
	switch {
	case d.literal("true"):
		*dst = true
	case d.literal("false"), d.literal("null"):
		*dst = false
	default:
		return false
	}
	return true
}

func (d *fastDecoder) literal(lit string) bool {
	if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// millis reads a timestamp as jsonwire.ReadMillis does: a number
// truncated to an integer (0 when out of range), an ISO string, or null.
func (d *fastDecoder) millis(dst *int64) bool {
	switch c := d.peek(); {
	case c == 'n':
		if !d.literal("null") {
			return false
		}
		*dst = 0
	case c == '"':
		var s string
		if !d.string(&s) {
			return false
		}
		*dst = jsonwire.ISOMillis(s)
	default:
		f, ok := d.number()
		if !ok {
			return false
		}
		*dst = int64(f)
	}
	return true
}

// number reads a JSON number as a float64; ok is false for anything that
// is not a number. Out of range reads as 0, as jsonwire.ReadMillis takes it.
func (d *fastDecoder) number() (float64, bool) {
	f, ok, inRange := d.float()
	if !inRange {
		f = 0
	}
	return f, ok
}

// strictNumber reads a number that must be in range.
func (d *fastDecoder) strictNumber() (float64, bool) {
	f, ok, inRange := d.float()
	return f, ok && inRange
}

// float reads a JSON number as strconv.ParseFloat does.
func (d *fastDecoder) float() (f float64, ok, inRange bool) {
	if d.i >= len(d.b) || d.b[d.i] != '-' && (d.b[d.i] < '0' || d.b[d.i] > '9') {
		return 0, false, false
	}
	end, ok := numberEnd(d.b, d.i)
	if !ok {
		return 0, false, false
	}
	text := d.b[d.i:end]
	d.i = end
	// Integers below 2^53, the common case, convert exactly.
	if n, ok := plainInt(text, 15); ok {
		return float64(n), true, true
	}
	f, err := strconv.ParseFloat(string(text), 64)
	return f, true, err == nil
}

// usage reads an assistant's usage: null leaves it as it is; an object of
// numbers (and a cost object of numbers) replaces it, as
// llm.Usage.UnmarshalJSONFrom does. Anything else, including a repeated
// member, is left to the general decoder.
func (d *fastDecoder) usage(dst *llm.Usage) bool {
	if d.literal("null") {
		return true
	}
	if !d.next('{') {
		return false
	}
	var u llm.Usage
	var seen uint
	ok := d.objectBody(func(name []byte) bool {
		var bit uint
		var field *int
		switch string(name) {
		case "input":
			bit, field = 1, &u.Input
		case "output":
			bit, field = 2, &u.Output
		case "cacheRead":
			bit, field = 4, &u.CacheRead
		case "cacheWrite":
			bit, field = 8, &u.CacheWrite
		case "totalTokens":
			bit, field = 16, &u.TotalTokens
		case "cost":
			if seen&32 != 0 {
				return false
			}
			seen |= 32
			if d.literal("null") {
				u.Cost = llm.Cost{}
				return true
			}
			return d.cost(&u.Cost)
		default:
			return d.skip()
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		f, ok := d.strictNumber()
		*field = int(f)
		return ok
	})
	if ok {
		*dst = u
	}
	return ok
}

func (d *fastDecoder) cost(dst *llm.Cost) bool {
	if !d.next('{') {
		return false
	}
	var seen uint
	return d.objectBody(func(name []byte) bool {
		var bit uint
		var field *float64
		switch string(name) {
		case "input":
			bit, field = 1, &dst.Input
		case "output":
			bit, field = 2, &dst.Output
		case "cacheRead":
			bit, field = 4, &dst.CacheRead
		case "cacheWrite":
			bit, field = 8, &dst.CacheWrite
		case "total":
			bit, field = 16, &dst.Total
		default:
			return d.skip()
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		var ok bool
		*field, ok = d.strictNumber()
		return ok
	})
}

// objectBody reads the members of an object whose opening brace was
// consumed, through its closing brace.
func (d *fastDecoder) objectBody(member func(name []byte) bool) bool {
	if d.next('}') {
		return true
	}
	return d.object(member)
}

// content reads a message's content as llm.DecodeContentList does: an
// array of blocks, a string (one text block; none when empty) or null.
func (d *fastDecoder) content(dst *[]llm.Content) bool {
	switch d.peek() {
	case 'n':
		if !d.literal("null") {
			return false
		}
		*dst = nil
		return true
	case '"':
		var s string
		if !d.string(&s) {
			return false
		}
		if s == "" {
			*dst = []llm.Content{}
		} else {
			*dst = d.contentList([]llm.Content{llm.Text{Text: s}})
		}
		return true
	case '[':
		d.i++
	default:
		return false
	}
	var few [8]llm.Content // most lists are short: no allocation until they are copied out
	blocks := few[:0]
	if d.next(']') {
		*dst = []llm.Content{}
		return true
	}
	for {
		var b llm.Content
		switch d.peek() {
		case '"':
			var s string
			if !d.string(&s) {
				return false
			}
			b = llm.Text{Text: s}
		case '{':
			var ok bool
			if b, ok = d.block(); !ok {
				return false
			}
		default:
			return false
		}
		blocks = append(blocks, b)
		if d.next(',') {
			d.space()
			continue
		}
		if !d.next(']') {
			return false
		}
		*dst = d.contentList(blocks)
		return true
	}
}

// Members of a content block, as bits of a set.
const (
	blkType = 1 << iota
	blkText
	blkTextSignature
	blkThinking
	blkThinkingSignature
	blkRedacted
	blkData
	blkMIMEType
	blkID
	blkName
	blkArguments
	blkThoughtSignature
)

// block reads one content block object as llm's decoder does: every member
// of the union read whatever the type, then the type picks the block.
func (d *fastDecoder) block() (llm.Content, bool) {
	start := d.i
	d.i++ // {
	var (
		typ, text, textSig, thinking, thinkingSig, data, mime, id, name, thoughtSig string
		redacted                                                                    bool
		args                                                                        []byte
		seen                                                                        uint
	)
	ok := d.objectBody(func(member []byte) bool {
		var bit uint
		var dst *string
		switch string(member) {
		case "type":
			bit, dst = blkType, &typ
		case "text":
			bit, dst = blkText, &text
		case "textSignature":
			bit, dst = blkTextSignature, &textSig
		case "thinking":
			bit, dst = blkThinking, &thinking
		case "thinkingSignature":
			bit, dst = blkThinkingSignature, &thinkingSig
		case "data":
			bit, dst = blkData, &data
		case "mimeType":
			bit, dst = blkMIMEType, &mime
		case "id":
			bit, dst = blkID, &id
		case "name":
			bit, dst = blkName, &name
		case "thoughtSignature":
			bit, dst = blkThoughtSignature, &thoughtSig
		case "redacted":
			if seen&blkRedacted != 0 {
				return false
			}
			seen |= blkRedacted
			switch {
			case d.literal("true"):
				redacted = true
			case d.literal("false"):
				redacted = false
			default:
				return false
			}
			return true
		case "arguments":
			if seen&blkArguments != 0 || d.peek() != '{' {
				return false
			}
			seen |= blkArguments
			s := d.i
			if !d.skip() {
				return false
			}
			args = d.b[s:d.i]
			return true
		default:
			return d.skip()
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return d.string(dst)
	})
	if !ok {
		return nil, false
	}
	switch typ {
	case llm.ContentText:
		return llm.Text{Text: text, Signature: textSig}, true
	case llm.ContentThinking:
		return llm.Thinking{Thinking: thinking, Signature: thinkingSig, Redacted: redacted}, true
	case llm.ContentImage:
		return llm.Image{Data: data, MIMEType: mime}, true
	case llm.ContentToolCall:
		newArgs := llm.NewArguments
		if d.shared {
			newArgs = llm.AdoptArguments
		}
		a, err := newArgs(args)
		if err != nil {
			return nil, false
		}
		return llm.ToolCall{ID: id, Name: name, Arguments: a, ThoughtSignature: thoughtSig}, true
	}
	return llm.UnknownContent{Type: typ, Raw: d.value(d.b[start:d.i])}, true
}

// string reads a JSON string into dst. It gives up on invalid UTF-8 and on
// \u escapes that are not a character or a valid surrogate pair, which the
// general decoder replaces by U+FFFD.
func (d *fastDecoder) string(dst *string) bool {
	b := d.b
	if d.i >= len(b) || b[d.i] != '"' {
		return false
	}
	i := d.i + 1
	start := i
	escaped := false
	out := &d.out
	for {
		i = jsonscan.PlainRun(b, i, true)
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			if escaped {
				out.write(b[start:i])
				*dst = out.string()
			} else {
				*dst = d.text(b[start:i])
			}
			d.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			if !escaped {
				out.begin(len(b) - start)
				escaped = true
			}
			out.write(b[start:i])
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				out.writeByte(e)
				i += 2
			case 'b':
				out.writeByte('\b')
				i += 2
			case 'f':
				out.writeByte('\f')
				i += 2
			case 'n':
				out.writeByte('\n')
				i += 2
			case 'r':
				out.writeByte('\r')
				i += 2
			case 't':
				out.writeByte('\t')
				i += 2
			case 'u':
				r, ok := jsonscan.Hex4(b, i+2)
				if !ok {
					return false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 || i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
						return false
					}
					r2, ok := jsonscan.Hex4(b, i+2)
					if !ok {
						return false
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return false
					}
					i += 6
				}
				out.writeRune(r)
			default:
				return false
			}
			start = i
		default:
			n := jsonscan.CharLen(b[i:])
			if n == 0 {
				return false
			}
			i += n
		}
	}
}
