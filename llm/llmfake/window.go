package llmfake

import (
	"fmt"
	"math"
	"net/http"

	"github.com/prime-agent/prime/llm"
)

// Window is a simulated context window: with one set ([Server.SetWindow]),
// a fake server counts tokens as a real server's tokenizer would and keeps
// every request and answer inside the window, as the server its flavour
// imitates does:
//
//   - The prompt's size is the chars/4 estimate of each of its texts (the
//     system prompt, every message, the tool definitions) times Ratio,
//     plus 4 tokens per message for the chat template. Answers are counted
//     the same way.
//   - llama.cpp (FlavorLlamaCpp) refuses a prompt of Size tokens or more,
//     whatever max_tokens says, with its exceed_context_size_error body
//     (n_prompt_tokens, n_ctx). It takes any smaller prompt and generates
//     until the answer is done, max_tokens is reached, or the context is
//     full; the last two both end with finish_reason "length".
//   - The other servers refuse a prompt whose size plus max_tokens passes
//     Size, in their own wording and with both numbers where they give
//     them (Anthropic, OpenAI, vLLM, OpenRouter); an answer longer than
//     max_tokens is cut there with the vendor's output-limit stop.
//
// A refused request consumes no scripted reply. The usage a server reports
// is then its own count (the prompt's size, the tokens streamed), not the
// scripted one.
type Window struct {
	// Size is the window in tokens (llama.cpp's n_ctx); 0 turns the
	// simulation off.
	Size int
	// Ratio is how many of the server's tokens one chars/4 token makes:
	// 1 counts chars/4 exactly (0 means 1); a real tokenizer measures
	// about 0.9 on English prose, 1.3 on Go code, 2.3 with a small model's
	// vocabulary, 4.3 on Japanese.
	Ratio float64
}

// templateTokens is what the chat template adds per message (role markers),
// in the simulation's counts.
const templateTokens = 4

func (w Window) ratio() float64 {
	if w.Ratio <= 0 {
		return 1
	}
	return w.Ratio
}

// Tokens counts text as the simulated tokenizer does: ⌈Ratio × UTF-16
// length / 4⌉.
func (w Window) Tokens(text string) int {
	return int(math.Ceil(w.ratio() * float64(llm.UTF16Len(text)) / 4))
}

// PromptTokens is the size of a request's prompt as the simulated server
// counts it (see [Window]).
func (w Window) PromptTokens(r *Request) int {
	n := 0
	if system := r.System(); system != "" {
		n += w.Tokens(system) + templateTokens
	}
	for _, m := range r.Messages() {
		if m["role"] != "system" && m["role"] != "developer" {
			n += w.Tokens(textOf(m["content"])) + templateTokens
		}
	}
	if tools, ok := r.JSON["tools"]; ok {
		n += w.Tokens(string(marshal(tools)))
	}
	return n
}

// chars is how many UTF-16 units of text make at most n tokens.
func (w Window) chars(n int) int { return int(math.Floor(float64(n) * 4 / w.ratio())) }

// WindowStats counts what a server's simulated window did.
type WindowStats struct {
	// Refused counts requests refused as too large for the window.
	Refused int
	// Filled counts answers cut because the context filled (llama.cpp),
	// Truncated those cut at the request's max_tokens.
	Filled, Truncated int
}

// SetWindow sets the simulated context window (a zero Window turns it off)
// and resets its counts.
func (s *Server) SetWindow(w Window) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window, s.stats = w, WindowStats{}
}

// WindowStats returns what the simulated window did since it was set.
func (s *Server) WindowStats() WindowStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// refusal is the server's answer to a request its window does not take, if
// it does not.
func (s *Server) refusal(r *Request, w Window) (Reply, bool) {
	if w.Size <= 0 {
		return Reply{}, false
	}
	prompt, maxTokens := w.PromptTokens(r), r.MaxTokens()
	if s.api == llm.APIOpenAICompletions && s.flavor == FlavorLlamaCpp || s.api == llm.APIGoogleGenerativeAI || s.api == llm.APIGoogleVertex {
		maxTokens = 0 // llama.cpp takes any prompt below its context; Gemini limits the input alone
	}
	if prompt < w.Size && prompt+maxTokens <= w.Size {
		return Reply{}, false
	}
	s.mu.Lock()
	s.stats.Refused++
	s.mu.Unlock()
	return s.overflowError(prompt, w.Size, maxTokens), true
}

// overflowReply is the canned answer to a reply scripted as an overflow:
// the flavour's error for the request's size (as the window counts it,
// chars/4 without one) against the window, or, when the request fits it or
// there is none, against a window one token smaller than the request.
func (s *Server) overflowReply(r *Request) Reply {
	s.mu.Lock()
	w := s.window
	s.mu.Unlock()
	prompt := w.PromptTokens(r)
	size := w.Size
	if size <= 0 || size >= prompt {
		size = max(prompt-1, 0)
	}
	return s.overflowError(prompt, size, r.MaxTokens())
}

// overflowError is the flavour's error for a prompt of prompt tokens that,
// with maxTokens of output, does not fit a window of size tokens.
func (s *Server) overflowError(prompt, size, maxTokens int) Reply {
	bad := func(typ, format string, args ...any) Reply {
		return Reply{Status: http.StatusBadRequest, ErrorType: typ, ErrorMessage: fmt.Sprintf(format, args...)}
	}
	switch s.api {
	case llm.APIOpenAIResponses, llm.APIAzureOpenAIResponses:
		// The Responses API gives no numbers.
		return bad("context_length_exceeded", "Your input exceeds the context window of this model. Please adjust your input and try again.")
	case llm.APIGoogleGenerativeAI, llm.APIGoogleVertex:
		return bad("INVALID_ARGUMENT", "The input token count (%d) exceeds the maximum number of tokens allowed (%d).", prompt, size)
	}
	if s.api == llm.APIAnthropicMessages {
		if prompt >= size {
			return bad("invalid_request_error", "prompt is too long: %d tokens > %d maximum", prompt, size)
		}
		return bad("invalid_request_error", "input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", prompt, maxTokens, size)
	}
	switch s.flavor {
	case FlavorLlamaCpp:
		rep := bad("exceed_context_size_error", "request (%d tokens) exceeds the available context size (%d tokens), try increasing it", prompt, size)
		rep.PromptTokens, rep.ContextTokens = prompt, size
		return rep
	case FlavorOllama:
		return bad("api_error", "prompt too long; exceeded max context length by %d tokens", max(prompt+maxTokens-size, 1))
	case FlavorVLLM:
		return bad("BadRequestError", "This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", size, prompt+maxTokens, prompt, maxTokens)
	case FlavorLMStudio:
		return bad("invalid_request_error", "The number of tokens to keep from the initial prompt is greater than the context length.")
	case FlavorOpenRouter:
		return bad("", "This endpoint's maximum context length is %d tokens. However, you requested about %d tokens (%d of text input, %d in the output). Please reduce the length of either one.", size, prompt+maxTokens, prompt, maxTokens)
	}
	if prompt >= size {
		return bad("context_length_exceeded", "This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", size, prompt)
	}
	return bad("context_length_exceeded", "This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", size, prompt+maxTokens, prompt, maxTokens)
}

// fit cuts a scripted answer to what the window leaves it: the request's
// max_tokens, and the room the prompt leaves in the context. The parts
// returned carry the server's own usage count and, when cut, the
// output-limit stop.
func (s *Server) fit(r *Request, w Window, parts []Part) []Part {
	if w.Size <= 0 {
		return parts
	}
	prompt := w.PromptTokens(r)
	limit, filled := w.Size-prompt, true
	if m := r.MaxTokens(); m > 0 && m <= limit {
		limit, filled = m, false
	}
	out := make([]Part, 0, len(parts)+2)
	used, cut := 0, false
	for _, p := range parts {
		if p.Usage != nil || p.Stop != "" {
			continue // the server counts and decides
		}
		if cut {
			continue // nothing is generated after the limit
		}
		n := w.partTokens(p)
		if used+n <= limit {
			out = append(out, p)
			used += n
			continue
		}
		cut = true
		room := w.chars(limit - used)
		switch {
		case p.Text != "":
			p.Text, _ = llm.UTF16Prefix(p.Text, room)
		case p.Thinking != "":
			p.Thinking, _ = llm.UTF16Prefix(p.Thinking, room)
		default:
			p = Part{} // a tool call or an event that does not fit is not sent
		}
		if p.Text != "" || p.Thinking != "" {
			out = append(out, p)
		}
		used = limit
	}
	out = append(out, Part{Usage: &UsagePart{Input: prompt, Output: used}})
	if cut {
		out = append(out, MaxTokens())
		s.mu.Lock()
		if filled {
			s.stats.Filled++
		} else {
			s.stats.Truncated++
		}
		s.mu.Unlock()
	}
	return out
}

// partTokens counts the output tokens of one part.
func (w Window) partTokens(p Part) int {
	switch {
	case p.Text != "":
		return w.Tokens(p.Text)
	case p.Thinking != "":
		return w.Tokens(p.Thinking)
	case p.ToolCall != nil:
		return w.Tokens(p.ToolCall.Name + p.ToolCall.args())
	}
	return 0
}
