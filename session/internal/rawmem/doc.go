// Package rawmem holds every use of package unsafe and every memory map of
// the session reading engine: views of memory the caller already holds,
// read-only maps of a file's pages, advice on memory about to be filled,
// and the guard that turns a fault on a map into an error. Nothing here
// writes through a view.
//
// Each function names the invariant that makes it safe, and each is the
// caller's to keep:
//
//   - [Bytes] views a slice of a plain type (no pointers, no booleans: any
//     bytes are a valid value, checked on every call) as its bytes, in the
//     machine's byte order, to write or read it whole.
//   - [StringBytes] views a string's bytes: the caller only reads them.
//   - [String] views bytes as a string without copying them: the bytes are
//     never written again for as long as the string may be used. A string
//     into the middle of a buffer keeps the whole buffer alive, as a slice
//     would, so the garbage collector needs no help.
//   - [ArrayAt] rebuilds an array from its first element: the caller holds
//     that element (which keeps the array alive) and knows the length.
//   - [FileMap] maps a window of a file at a time, read-only and shared. A
//     file that shrinks under its map leaves pages that fault when read:
//     every read of a view must run inside [Guard], which turns that fault
//     into [ErrShrank]; a view is not used after the next View or Close.
//   - [Populate] advises the system on memory the caller owns (give its
//     pages now, as huge pages where whole ones fit): it changes no byte,
//     and advises on nothing outside the slice it is given.
package rawmem
