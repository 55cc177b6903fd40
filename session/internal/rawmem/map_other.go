//go:build !linux

package rawmem

import "os"

// FileMap is not available on this system (see the Linux one).
type FileMap struct{}

// NewFileMap returns nil: only Linux maps session files.
func NewFileMap(*os.File, int64, int64, int64) *FileMap { return nil }

// View is never called: there is no FileMap here.
func (*FileMap) View(int64, int64) ([]byte, error) { panic("rawmem: no file maps on this system") }

// Close does nothing.
func (*FileMap) Close() {}
