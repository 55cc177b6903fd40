// Package permission decides what the tools' processes may reach: which of
// Prime's environment variables a command inherits (secrets stay with
// Prime, see [EnvPolicy]) and, on Linux, the OS sandbox a bash command runs
// in (see [Sandbox]): Landlock rules on the file system, a user and network
// namespace with only loopback, and resource limits, applied by a small
// trampoline in the child so that Prime itself is never confined.
package permission
