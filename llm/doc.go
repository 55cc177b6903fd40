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
// [StopReasonAborted] and an error wrapping [context.Canceled].
package llm
