// Package llm is Prime's provider-neutral model of a conversation with a
// language model, and the contract every provider implements.
//
// # Messages
//
// A conversation is a list of [Message] values: [*UserMessage],
// [*AssistantMessage] and [*ToolResultMessage]. Their content is made of
// [Content] blocks: [Text], [Thinking], [Image] and [ToolCall]. The JSON
// encoding of every type is exactly the one pi stores in its session files
// (camelCase keys, pi's key order, Unix-millisecond timestamps), so a
// finished assistant stream is, byte for byte, the message a session entry
// carries. Decoding is tolerant where pi's files are: string content is read
// as one text block, unknown block types survive as [UnknownContent], and
// missing fields take their zero value.
//
// # Providers
//
// A [Provider] streams one assistant turn as a sequence of [Event] values that
// always ends with exactly one [EventDone] or [EventError] event carrying the
// final [AssistantMessage]. [Complete] collects a stream into that message.
// Errors are classified so callers can branch on them with errors.Is:
// [ErrContextOverflow], [ErrRateLimited], [ErrOverloaded], [ErrServer],
// [ErrConnection], [ErrAuth]; a cancelled request reports
// [StopReasonAborted] and an error wrapping [context.Canceled] (an abort,
// not a failure: [IsAborted]).
//
// # Overflow and retries
//
// [NewAPIError] classifies a provider failure from its status, type and
// text. A context overflow is recognised from every provider's wording pi
// knows (Anthropic, OpenAI, Gemini, xAI, Groq, OpenRouter, vLLM, llama.cpp,
// LM Studio, Ollama, Mistral, Kimi, MiniMax, z.ai, bodyless 400/413) and a
// few it does not (llama.cpp's exceed_context_size_error type alone and its
// "Context size has been exceeded", Anthropic's input plus max_tokens
// beyond the window), never from throttling texts that mention tokens;
// [IsContextOverflow] applies the same test to a stored message and adds
// pi's usage rules (input beyond the window; an empty answer cut at 99% of
// it). When the server says how large the request was and how large its
// window is, the providers keep both numbers on the error
// ([APIError].PromptTokens, ContextTokens), counted by the server's own
// tokenizer. [LengthStopOverflow] tells a "length" stop caused by a full
// context (some servers generate until the context is full) from one caused
// by the output limit. [RetryDecision] is the policy
// the providers' retries (package retry) follow: rate limits, overloads,
// 5xx and broken connections are retried, honouring Retry-After; an
// overflow, an auth failure or an abort never is.
//
// # Models
//
// [Model] carries what a provider needs: window, output limit, reasoning
// style, input kinds, prices (priced with pi's arithmetic by
// [Model.CostOf], so a stored message's cost is byte-identical to pi's) and,
// for OpenAI-compatible servers, an [OpenAICompat] block. [BuiltinModels]
// lists current Anthropic and OpenAI models; package registry adds the
// user's models.json. Credentials travel as [Secret], which never prints.
//
// Decisions where pi is silent: usage from OpenAI-compatible servers counts
// completion_tokens once (pi adds reasoning tokens a second time); a tool
// call whose arguments are not valid JSON (cut off by the output limit) is
// stored with an empty object; redacted thinking is stored as pi stores it,
// "[Reasoning redacted]" with the payload as its signature.
package llm
