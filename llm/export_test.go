package llm

// Stringified exposes the fast check of NewArguments to the tests.
var Stringified = stringified

// ReformatArguments exposes the full reformatting of NewArguments.
var ReformatArguments = reformatArguments
