package smallfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	environ := filepath.Join(dir, "environ")
	if err := os.Symlink("/proc/self/environ", environ); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string
		refused    bool
		missing    bool
	}{
		{name: "small file", path: small, want: "hello"},
		{name: "over the limit", path: big, refused: true},
		// Opening a FIFO for reading waits for a writer; it must not.
		{name: "fifo", path: fifo, refused: true},
		// /dev/zero never ends.
		{name: "device through a link", path: zero, refused: true},
		{name: "directory", path: dir, refused: true},
		{name: "missing", path: filepath.Join(dir, "none"), missing: true},
	}
	if runtime.GOOS == "linux" {
		// A regular file of size 0 that holds this process's secrets.
		tests = append(tests, struct {
			name, path string
			want       string
			refused    bool
			missing    bool
		}{name: "proc", path: environ, refused: true})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Read(tc.path, 10)
			switch {
			case tc.missing:
				if !errors.Is(err, fs.ErrNotExist) || Refused(err) {
					t.Errorf("err = %v, want not exist", err)
				}
			case tc.refused:
				if !Refused(err) {
					t.Errorf("err = %v (data %q), want a refusal", err, data)
				}
			case err != nil || string(data) != tc.want:
				t.Errorf("Read = %q, %v; want %q", data, err, tc.want)
			}
		})
	}
}
