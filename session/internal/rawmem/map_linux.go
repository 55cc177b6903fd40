package rawmem

import (
	"os"
	"syscall"
)

// FileMap reads a file through read-only shared maps of one window at a
// time: the page cache is read in place instead of being copied, and since
// only the window at hand is mapped the pages read do not pile up in the
// process's resident memory. MADV_SEQUENTIAL asks for read-ahead on a file
// not yet in the page cache.
type FileMap struct {
	fd       int
	end      int64
	min, pad int64
	// m maps the file from off; nil when nothing is mapped.
	m   []byte
	off int64
}

// NewFileMap returns a map of f up to end whose windows span at least
// window bytes from where a view starts and pad bytes past where it ends
// (so that a view reaching a little further seldom needs another map).
// It returns nil on systems without maps.
func NewFileMap(f *os.File, end, window, pad int64) *FileMap {
	return &FileMap{fd: int(f.Fd()), end: end, min: window, pad: pad}
}

// View returns the bytes [from, to) of the file, to at most the end given
// to NewFileMap. They stay valid until the next View or Close; read them
// only inside Guard.
func (s *FileMap) View(from, to int64) ([]byte, error) {
	if s.m == nil || from < s.off || to > s.off+int64(len(s.m)) {
		s.Close()
		page := int64(os.Getpagesize())
		off := from / page * page
		n := min(s.end, max(to, from+s.min)+s.pad) - off
		m, err := syscall.Mmap(s.fd, off, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return nil, err
		}
		syscall.Madvise(m, syscall.MADV_SEQUENTIAL)
		s.m, s.off = m, off
	}
	return s.m[from-s.off : to-s.off : to-s.off], nil
}

// Close unmaps what is mapped.
func (s *FileMap) Close() {
	if s.m != nil {
		syscall.Munmap(s.m)
		s.m = nil
	}
}
