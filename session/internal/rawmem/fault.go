package rawmem

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
)

// ErrShrank is the error of a read of a map past its file's new end: the
// file shrank while it was read.
var ErrShrank = errors.New("the file shrank while it was read")

// Guard runs f, which reads views of a FileMap, turning a memory fault
// while it runs into an error wrapping ErrShrank instead of a crash. Any
// other panic goes on.
func Guard(f func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			if re, ok := p.(runtime.Error); ok && isFault(re) {
				err = fmt.Errorf("%w (%v)", ErrShrank, re)
				return
			}
			panic(p)
		}
	}()
	return f()
}

// isFault reports whether a runtime error is a memory fault, which has the
// faulting address.
func isFault(e runtime.Error) bool {
	_, ok := e.(interface{ Addr() uintptr })
	return ok
}
