package permission

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// maxGitlinks bounds how many submodule entries of an index are kept: no
// real project has more, and a crafted index must not make Prime protect
// a million paths.
const maxGitlinks = 4096

// gitlinkMode is an index entry's mode for a submodule (a commit).
const gitlinkMode = 0o160000

// gitlinks returns the paths of the submodules (gitlinks) in a git index
// file, versions 2 to 4: git runs in each of them at the user's next git
// status, whether or not .gitmodules names them. A file that is not an
// index, or ends early, gives what was read.
func gitlinks(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	out, _ := readGitlinks(bufio.NewReaderSize(f, 64<<10))
	return out
}

// readGitlinks reads an index from r (see [gitlinks]).
func readGitlinks(r *bufio.Reader) ([]string, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != "DIRC" {
		return nil, errors.New("not a git index")
	}
	version := binary.BigEndian.Uint32(hdr[4:8])
	if version < 2 || version > 4 {
		return nil, errors.New("unknown index version")
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	var out []string
	var prev []byte // v4: the previous entry's path
	var fixed [62]byte
	for range count {
		if _, err := io.ReadFull(r, fixed[:]); err != nil {
			return out, err
		}
		mode := binary.BigEndian.Uint32(fixed[24:28])
		flags := binary.BigEndian.Uint16(fixed[60:62])
		n := 62
		if version >= 3 && flags&0x4000 != 0 { // extended flags
			if _, err := r.Discard(2); err != nil {
				return out, err
			}
			n += 2
		}
		var path []byte
		if version == 4 {
			strip, err := gitOffset(r)
			if err != nil {
				return out, err
			}
			rest, err := readPath(r)
			if err != nil {
				return out, err
			}
			if strip > uint64(len(prev)) {
				return out, errors.New("bad path compression")
			}
			path = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], rest[:len(rest)-1]...)
			prev = path
		} else {
			rest, err := readPath(r)
			if err != nil {
				return out, err
			}
			path = rest[:len(rest)-1]
			// Entries are padded with NULs to a multiple of eight bytes.
			if pad := (8 - (n+len(rest))%8) % 8; pad > 0 {
				if _, err := r.Discard(pad); err != nil {
					return out, err
				}
			}
		}
		if mode&0o170000 == gitlinkMode && len(path) > 0 && !bytes.Contains(path, []byte{0}) {
			out = append(out, string(path))
			if len(out) >= maxGitlinks {
				return out, nil
			}
		}
	}
	return out, nil
}

// readPath reads an entry's NUL-terminated path, at most the reader's
// buffer long (a crafted index without a NUL must not be read whole).
func readPath(r *bufio.Reader) ([]byte, error) {
	b, err := r.ReadSlice(0)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// gitOffset reads git's variable-length number of index version 4 (most
// significant group first, each continuation adding one).
func gitOffset(r *bufio.Reader) (uint64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(c & 127)
	for i := 0; c&128 != 0; i++ {
		if i >= 9 {
			return 0, errors.New("number too long")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		v = (v+1)<<7 | uint64(c&127)
	}
	return v, nil
}
