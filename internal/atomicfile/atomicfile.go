// Package atomicfile replaces files so that a crash at any moment leaves
// either the old contents or the new, never a mix or an empty file.
package atomicfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to a temporary file in path's directory, flushes it
// to disk, gives it mode perm and renames it over path, then flushes the
// directory so the rename itself survives a crash. On failure path is left
// as it was and the temporary file is removed.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Replace is WriteFile keeping the permissions of the file it replaces;
// perm is the mode of a file that does not exist yet.
func Replace(path string, data []byte, perm fs.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	return WriteFile(path, data, perm)
}

// Write is WriteFile with the contents written by write, for contents too
// large to hold in memory at once.
func Write(path string, perm fs.FileMode, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("%s renamed but its directory was not flushed: %w", path, err)
	}
	return nil
}

// syncDir flushes a directory's entries to disk. Systems that cannot open a
// directory for syncing (Windows) make the rename durable by themselves.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !isUnsupported(err) {
		return err
	}
	return nil
}
