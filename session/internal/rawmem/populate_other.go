//go:build !linux

package rawmem

// Populate does nothing here: it is an advice to Linux (see the Linux one).
func Populate([]byte) {}
