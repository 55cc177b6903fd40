// Package layering holds the test that keeps the house's layers apart: the
// front ends (the terminal UI, RPC, print/JSON mode) see a session only
// through the agent, so they import the agent, llm's types and internal
// helpers, and nothing below the agent. It has no code of its own.
package layering
