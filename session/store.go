package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prime-agent/prime/llm"
)

// ErrReadOnly reports an append to a session opened with [Load] or [Parse].
var ErrReadOnly = errors.New("opened read-only")

// ErrInvalidID reports a session id that pi would not accept (see
// [Options.ID]).
var ErrInvalidID = errors.New("invalid session id")

// Options configure a new session.
type Options struct {
	// ID is the session id. Empty means a new UUID v7. A given id must
	// match ^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$ (pi's rule), since
	// it becomes part of the file name.
	ID string
	// CWD is the working directory recorded in the header. Empty means the
	// process's.
	CWD string
	// ParentSession is the path of the session this one is forked from.
	ParentSession string
	// Now is the clock for the header's and the entries' timestamps. Nil
	// means time.Now.
	Now func() time.Time
	// Write, when set, makes every write to the file in place of
	// (*os.File).Write: a test injects short writes, ENOSPC and EIO
	// through it. Nil means f.Write.
	Write WriteFunc
}

// WriteFunc writes p to the session file f, as (*os.File).Write does: it
// returns how many bytes were written and, when fewer than len(p), why.
type WriteFunc func(f *os.File, p []byte) (int, error)

// writer is the appending side of a session.
type writer struct {
	f *os.File // nil until the file exists, and for in-memory sessions
	// size is how many bytes of the file the session has read or written;
	// bytes beyond it were appended by another process.
	size int64
	// pending is set while the file has not been created: pi 1.6 writes
	// nothing until the conversation starts (the first user or assistant
	// message).
	pending bool
	// memory is set for a session that is never written.
	memory bool
	closed bool
	now    func() time.Time
	// write makes the writes to f (see [Options.Write]).
	write WriteFunc
}

// fileWrite is the ordinary [WriteFunc].
func fileWrite(f *os.File, p []byte) (int, error) { return f.Write(p) }

// writeTo makes w's writes to f an io.Writer.
type writeTo struct {
	w *writer
	f *os.File
}

func (t writeTo) Write(p []byte) (int, error) { return t.w.write(t.f, p) }

// Create starts a new session that will be written to path. As in pi, the
// file is created (mode 0600, directories 0700) when the first user or
// assistant message is appended, with the header and every entry so far in one write
// (in runs of whole lines of up to 8 MB when they are larger, as a fork of
// a long conversation may be); [Session.Flush] creates it earlier. It is an error if path exists then or
// now. An empty path gives a session kept only in memory.
func Create(path string, opts Options) (*Session, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	t := now()
	id := opts.ID
	if id == "" {
		id = NewSessionID(t)
	} else if !validSessionID(id) {
		return nil, fmt.Errorf("%w %q: use letters, digits, '.', '_' and '-', starting and ending with a letter or digit", ErrInvalidID, id)
	}
	cwd := opts.CWD
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	h := &Header{Version: CurrentVersion, ID: id, Timestamp: FormatTime(t), CWD: cwd, ParentSession: opts.ParentSession}
	raw, err := encodeHeader(h)
	if err != nil {
		return nil, err
	}
	h.raw = raw
	if path != "" {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
	}
	return newSession(path, h, &writer{pending: path != "", memory: path == "", now: now, write: writeFuncOf(opts.Write)}), nil
}

func writeFuncOf(f WriteFunc) WriteFunc {
	if f == nil {
		return fileWrite
	}
	return f
}

// newSession returns a session of no entries yet, kept in memory, with
// header h.
func newSession(path string, h *Header, w *writer) *Session {
	mem := append(bytes.Clone(h.raw), '\n')
	s := &Session{
		path: path, header: h, fileVersion: CurrentVersion, leaf: -1, lines: 1,
		src: memorySource(mem), indexed: int64(len(mem)), ids: &idIndex{}, w: w,
	}
	s.sumLine(0, h.raw, checksum(h.raw))
	return s
}

// CreateIn is [Create] with the file named as pi names it, in dir:
// <timestamp>_<session id>.jsonl (see [FileName]).
func CreateIn(dir string, opts Options) (*Session, error) {
	path, opts := nameIn(dir, opts)
	return Create(path, opts)
}

// nameIn returns the path of a new session in dir, named as pi names it,
// and opts with the id in that name and a clock whose first reading, the
// header's time, is the time in that name.
func nameIn(dir string, opts Options) (string, Options) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	t := now()
	first := true
	opts.Now = func() time.Time {
		if first {
			first = false
			return t
		}
		return now()
	}
	if opts.ID == "" {
		opts.ID = NewSessionID(t)
	}
	return filepath.Join(dir, FileName(t, opts.ID)), opts
}

// Open opens an existing session file for reading and appending. A file in
// an older format version is first migrated on disk (see [Migrate]: the old
// file is kept as FILE.bak), since entries of version 3 cannot be appended
// to it. An empty file gets a header at once, as in pi. A non-empty file
// that is not a session is a [*NotSessionError] and is left untouched. Call
// [Session.Close] when done.
func Open(path string) (*Session, error) { return OpenWith(path, ReadOptions{}) }

// OpenWith is [Open] with options.
func OpenWith(path string, opts ReadOptions) (*Session, error) {
	for attempt := 0; ; attempt++ {
		s, old, err := open(path, opts)
		if err != nil || !old {
			return s, err
		}
		if attempt > 0 {
			return nil, fmt.Errorf("%s is still in an old format after migrating it", path)
		}
		if _, err := Migrate(path); err != nil {
			return nil, err
		}
	}
}

// open reads path under the lock. old reports a file that must be migrated
// first (s is nil then).
func open(path string, opts ReadOptions) (s *Session, old bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if err != nil || old {
			f.Close()
		}
	}()
	if err := lockFile(f); err != nil {
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	defer unlockFile(f)
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if fi.Mode().IsRegular() && fi.Size() == 0 {
		// An empty file: it gets a header, as in pi.
		s, err := Create("", Options{})
		if err != nil {
			return nil, false, err
		}
		s.path = path
		line := append(bytes.Clone(s.header.raw), '\n')
		if n, err := writeFuncOf(opts.Write)(f, line); err != nil || n < len(line) {
			if n > 0 {
				f.Truncate(0) // the file was empty: leave it so
			}
			if err == nil {
				err = io.ErrShortWrite
			}
			return nil, false, fmt.Errorf("writing the header of %s: %w", path, err)
		}
		if fi, err = f.Stat(); err != nil {
			return nil, false, err
		}
		s.src = fileSource(f, path, fi)
		s.setMark(line)
		s.w = &writer{f: f, size: int64(len(line)), now: time.Now, write: writeFuncOf(opts.Write)}
		return s, false, nil
	}
	s, err = readFile(path, f, opts)
	if err != nil {
		return nil, false, err
	}
	if s.fileVersion < CurrentVersion {
		return nil, true, nil
	}
	if s.fileVersion > CurrentVersion {
		return nil, false, fmt.Errorf("%s has format version %d, newer than Prime's (%d); not appending to it", path, s.fileVersion, CurrentVersion)
	}
	if s.src.cur.Load().memory {
		return nil, false, fmt.Errorf("%s is not a regular file; not appending to it", path)
	}
	if err := s.readMark(f); err != nil {
		return nil, false, err
	}
	s.w = &writer{f: f, size: s.scanned, now: time.Now, write: writeFuncOf(opts.Write)}
	return s, false, nil
}

// Close closes the session file. Appending afterwards fails; entries read
// afterwards open the file again (and fail if it is no longer the same
// file).
func (s *Session) Close() error {
	s.waitSave()
	s.saveIndex()
	var f *os.File
	if b := s.src.cur.Load(); !b.memory {
		f = b.f
		s.src.detach()
	}
	if s.w != nil {
		s.w.f = nil
		s.w.closed = true
	}
	if f == nil {
		return nil
	}
	return f.Close()
}

// saveIndex writes the persistent index of a session that appended to its
// file (or read what others appended) since the index was last written,
// when closing it: the next open then reads the index and trusts it on the
// file's stamp instead of checking every block. The stamp vouches for the
// file only once its last change is racyMargin old, so this waits for
// that first (a few tens of milliseconds after the last append, on a file
// system that keeps fine times). Nothing is written when the file is not
// as the session last saw it.
func (s *Session) saveIndex() {
	x, w := s.indexFile, s.w
	if x == nil || w == nil || w.f == nil || s.indexed == s.savedAt {
		return
	}
	if err := lockFile(w.f); err != nil {
		return
	}
	defer unlockFile(w.f)
	stamp := func() (fileStamp, bool) {
		fi, err := w.f.Stat()
		if err != nil || fi.Size() != w.size {
			return fileStamp{}, false
		}
		return stampOf(fi)
	}
	st, ok := stamp()
	if !ok || s.checkUnchanged() != nil {
		return
	}
	changed := max(st.mtime, st.ctime)
	if margin := racyMargin(changed); margin < int64(time.Second) {
		if wait := time.Duration(changed + margin - time.Now().UnixNano()); wait > 0 {
			time.Sleep(wait + time.Millisecond)
		}
		if again, ok := stamp(); !ok || again != st {
			return
		}
	}
	y := *x
	y.stamp, y.stampTime = st, time.Now().UnixNano()
	y.save(s, w.f)
	s.savedAt = s.indexed
}

// Append adds p as a child of the current leaf and moves the leaf to it.
// The entry is written as one line in one write, under the file's lock;
// entries other processes appended since the session was read are read
// first, so ids stay unique. A compaction's SystemMessage is written with
// the entry's time as its timestamp (p itself is not changed). It returns
// the new entry.
func (s *Session) Append(p Payload) (*Entry, error) {
	return s.appendAt(s.leaf, p)
}

// AppendAt adds p as a child of the entry with the given id ("" for a new
// root) and moves the leaf to it, as one crash-safe append: the way to
// write a compaction below the leaf it was prepared for, or a branch
// summary at the point the user navigated to.
func (s *Session) AppendAt(parentID string, p Payload) (*Entry, error) {
	parent := int32(-1)
	if parentID != "" {
		i, ok := s.lookup(parentID)
		if !ok {
			return nil, fmt.Errorf("entry %s: %w", parentID, ErrNotFound)
		}
		parent = i
	}
	return s.appendAt(parent, p)
}

func (s *Session) appendAt(parent int32, p Payload) (*Entry, error) {
	w := s.w
	if w == nil {
		return nil, ErrReadOnly
	}
	if w.closed {
		return nil, errors.New("append after Close")
	}
	switch q := p.(type) {
	case *LabelEntry:
		if _, ok := s.lookup(q.TargetID); !ok {
			return nil, fmt.Errorf("entry %s: %w", q.TargetID, ErrNotFound)
		}
	case *SessionInfoEntry:
		c := *q
		c.Name = strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(q.Name))
		p = &c
	}
	if w.f != nil {
		if err := lockFile(w.f); err != nil {
			return nil, fmt.Errorf("locking %s: %w", s.path, err)
		}
		defer unlockFile(w.f)
		if err := s.readTail(); err != nil {
			return nil, err
		}
	}
	parentID := ""
	if parent >= 0 {
		parentID = s.idOf(parent)
	}
	now := w.now()
	if c, ok := p.(*CompactionEntry); ok && c.SystemMessage != nil {
		// pi stamps the compaction's system state with the entry's time.
		cc, sys := *c, *c.SystemMessage
		sys.Timestamp, sys.noTimestamp = now.UnixMilli(), false
		cc.SystemMessage = &sys
		p = &cc
	}
	line, err := EncodeEntry(s.newEntryID(), parentID, FormatTime(now), p)
	if err != nil {
		return nil, err
	}
	// Where the line goes: at the end of the file, after a newline when
	// the last line is torn or unfinished (a torn one then becomes a line
	// of its own).
	off, num, newline := s.indexed, s.lines+1, false
	if w.f != nil {
		off = w.size
		if !s.endsInNewline() {
			newline = true
			off++
			if s.torn != nil {
				num++
			}
		}
	}
	x, err := indexLine(line, off, num)
	if err != nil {
		return nil, fmt.Errorf("encoded %s entry does not read back: %w", p.EntryType(), err)
	}
	switch {
	case w.memory:
		s.src.appendMemory(line, []byte{'\n'})
	case w.pending:
		if !isConversation(p) && !s.hasConversation() {
			s.src.appendMemory(line, []byte{'\n'})
			break
		}
		if err := s.create(line); err != nil {
			return nil, err
		}
	default:
		buf, err := w.writeLine(line, newline)
		if err != nil {
			return nil, fmt.Errorf("appending to %s: %w", s.path, err)
		}
		s.setMark(buf)
	}
	if t := s.torn; t != nil && newline {
		// The torn line is ended: an ordinary malformed line now.
		s.warnings = append(s.warnings, Warning{Kind: WarnMalformed, Line: t.Line, Msg: s.tornMsg})
		s.torn = nil
		s.lines++
	}
	s.lines++
	s.sumLine(off, line, x.r.crc)
	s.indexed, s.midLine = off+int64(len(line))+1, false
	i := s.add(x)
	s.index(int(i))
	e := s.entryAt(i)
	if e.Type == TypeMessage {
		// The next context will want it: decode it from the line at hand.
		if m, err := e.decodeMessage(line); err == nil {
			e.remember(m)
		}
	}
	return e, nil
}

// endsInNewline reports whether the bytes read so far end with a newline
// (or there are none): else the next append starts a fresh line.
func (s *Session) endsInNewline() bool { return s.torn == nil && !s.midLine }

// writeLine writes one line in a single write, after a newline when the
// file ends in a torn or unfinished line.
func (w *writer) writeLine(line []byte, newline bool) ([]byte, error) {
	buf := make([]byte, 0, len(line)+2)
	if newline {
		buf = append(buf, '\n')
	}
	buf = append(buf, line...)
	buf = append(buf, '\n')
	n, err := w.write(w.f, buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the caller names the file
	}
	if err != nil {
		if n > 0 {
			// A short write (a full disk) left part of the line: cut the
			// file back to the last whole line. The file is ours while
			// the lock is held. Should that fail too, the part stays: the
			// next append reads it as a torn line and starts on a line of
			// its own, as after a crash.
			if terr := w.f.Truncate(w.size); terr != nil {
				err = fmt.Errorf("%w; and the %d bytes written could not be cut off again (%v), so the file ends in a torn line", err, n, terr)
			}
		}
		return buf, err
	}
	w.size += int64(n)
	return buf, nil
}

// Flush creates the session file now if it has not been written yet
// (normally that waits for the first user or assistant message). It does nothing
// for a session already on disk or kept in memory.
func (s *Session) Flush() error {
	if s.w == nil || !s.w.pending {
		return nil
	}
	return s.create(nil)
}

// create writes the header, the entries so far and extra (a line not yet
// added) as a new file (see writeWhole). It never overwrites a file, and
// removes what it made when a write fails. From then on the entries are
// read back from the file, not memory.
func (s *Session) create(extra []byte) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating %s: %w", s.path, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return fmt.Errorf("locking %s: %w", s.path, err)
	}
	defer unlockFile(f)
	mem := s.src.memoryBytes()
	out := writeTo{s.w, f}
	written, err := writeWhole(out, mem)
	if err == nil && extra != nil {
		var n int64
		n, err = writeWhole(out, append(slices.Clip(extra), '\n'))
		written += n
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if err != nil {
		// Leave nothing half-made behind: the session stays pending.
		f.Close()
		os.Remove(s.path)
		return fmt.Errorf("writing %s: %w", s.path, err)
	}
	s.src.switchToFile(f, s.path, fi)
	if extra != nil {
		s.setMark(append(slices.Clip(extra), '\n'))
	} else {
		s.setMark(mem)
	}
	s.w.f = f
	s.w.size = written
	s.w.pending = false
	return nil
}

// createChunk is the most bytes create writes at once: a new session is
// written in one write up to this size, and a larger one (a fork of a long
// conversation) in runs of whole lines, so that it is never copied whole.
const createChunk = 8 << 20

// writeWhole writes data, whole lines, to w in writes of whole lines of
// about createChunk bytes (one longer line is written alone), and returns
// the bytes written.
func writeWhole(w io.Writer, data []byte) (int64, error) {
	var total int64
	for len(data) > 0 {
		n := len(data)
		if n > createChunk {
			if i := bytes.LastIndexByte(data[:createChunk], '\n'); i >= 0 {
				n = i + 1
			} else if i := bytes.IndexByte(data[createChunk:], '\n'); i >= 0 {
				n = createChunk + i + 1
			}
		}
		k, err := w.Write(data[:n])
		total += int64(k)
		if err == nil && k < n {
			err = io.ErrShortWrite
		}
		if err != nil {
			return total, err
		}
		data = data[n:]
	}
	return total, nil
}

// readTail reads what other processes appended since the session last read
// or wrote the file, after checking that the file is still the one it
// read: not replaced, not shorter, its header and last entry where they
// were. The caller holds the lock.
func (s *Session) readTail() error {
	w := s.w
	fi, err := w.f.Stat()
	if err != nil {
		return err
	}
	if cur, err := os.Stat(s.path); err != nil || !os.SameFile(fi, cur) {
		return fmt.Errorf("%s was replaced or removed since it was opened (%w); open it again", s.path, ErrFileChanged)
	}
	if fi.Size() < w.size {
		return fmt.Errorf("%s shrank from %d to %d bytes since it was read (%w); open it again", s.path, w.size, fi.Size(), ErrFileChanged)
	}
	if err := s.checkUnchanged(); err != nil {
		return err
	}
	if fi.Size() == w.size {
		return nil
	}
	leaf := s.leaf
	if err := s.readMore(w.f, fi.Size()); err != nil {
		return err
	}
	if err := s.readMark(w.f); err != nil {
		return err
	}
	w.size = fi.Size()
	s.leaf = leaf
	return nil
}

// checkUnchanged reads back the header and the last bytes read: a file
// rewritten with other content no longer has them where they were.
func (s *Session) checkUnchanged() error {
	h := s.header.raw
	got := make([]byte, len(h)+len(s.mark))
	if _, err := s.w.f.ReadAt(got[:len(h)], s.headerOff); err != nil || !bytes.Equal(got[:len(h)], h) {
		return fmt.Errorf("the header of %s is not the one read before (%w); open it again", s.path, ErrFileChanged)
	}
	if m := got[len(h):]; len(m) > 0 {
		if _, err := s.w.f.ReadAt(m, s.indexed-int64(len(m))); err != nil || !bytes.Equal(m, s.mark) {
			return fmt.Errorf("%s does not end where it was read as it did (%w); open it again", s.path, ErrFileChanged)
		}
	}
	return nil
}

// markLen is how many of the last bytes read checkUnchanged compares.
const markLen = 64

// setMark notes the last bytes of written, which ends where the session
// has read to.
func (s *Session) setMark(written []byte) {
	s.mark = append(s.mark[:0], written[max(0, len(written)-markLen):]...)
}

// readMark reads the last bytes the session has read from f.
func (s *Session) readMark(f io.ReaderAt) error {
	m := make([]byte, min(markLen, s.indexed))
	if _, err := f.ReadAt(m, s.indexed-int64(len(m))); err != nil {
		return fmt.Errorf("reading %s: %w", s.path, err)
	}
	s.mark = m
	return nil
}

// nextNewline returns the offset of the first newline in r at or after
// off and before end, or -1.
func nextNewline(r io.ReaderAt, off, end int64) (int64, error) {
	buf := make([]byte, 4096)
	for off < end {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i), nil
		}
		off += int64(n)
		if err != nil && err != io.EOF {
			return -1, err
		}
		if n == 0 {
			break
		}
	}
	return -1, nil
}

// isConversation reports whether p is a user or an assistant message: the
// entries that start a session's file (pi 1.6 starts it at the user's
// message, so that a first prompt whose reply never comes is kept).
func isConversation(p Payload) bool {
	m, ok := p.(*MessageEntry)
	if !ok || m.Message == nil {
		return false
	}
	role := m.Message.Role()
	return role == llm.RoleUser || role == llm.RoleAssistant
}

// hasConversation reports whether a user or an assistant message has been
// appended.
func (s *Session) hasConversation() bool {
	for i := range s.recs {
		r := &s.recs[i]
		if r.typ != typeMessage {
			continue
		}
		switch r.role {
		case roleUser, roleAssistant:
			return true
		case roleUnknown:
			if role, err := s.entryAt(int32(i)).MessageRole(); err == nil && (role == llm.RoleUser || role == llm.RoleAssistant) {
				return true
			}
		}
	}
	return false
}

// messageBytes returns the raw message of a message entry's line, or nil.
func messageBytes(line []byte, head uint32) []byte {
	if raw, ok := lastMember(line, head, `,"message":`); ok {
		return raw
	}
	raw, _ := memberOf(line, "message")
	return raw
}

// newEntryID returns a fresh entry id: eight random hex digits, drawn again
// when taken (pi's rule), or a whole UUID after 100 collisions.
func (s *Session) newEntryID() string {
	var b [4]byte
	for range 100 {
		rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		if _, taken := s.lookup(id); !taken {
			return id
		}
	}
	return NewSessionID(time.Now())
}

// NewSessionID returns a new UUID version 7 (RFC 9562) for time t: 48 bits
// of Unix milliseconds, then random bits, so ids sort by creation time.
func NewSessionID(t time.Time) string {
	var b [16]byte
	rand.Read(b[6:])
	ms := uint64(t.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

// validSessionID reports whether id is a session id pi accepts.
func validSessionID(id string) bool {
	if id == "" {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(id[0]) || !alnum(id[len(id)-1]) {
		return false
	}
	for i := range len(id) {
		if c := id[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// FileName returns the file name of a session created at t with the given
// id: the time as ISO-8601 UTC with ':' and '.' replaced by '-', an
// underscore, the id and ".jsonl", e.g.
// 2025-12-03T14-00-00-000Z_0193a1b2-....jsonl.
func FileName(t time.Time, id string) string {
	ts := strings.NewReplacer(":", "-", ".", "-").Replace(FormatTime(t))
	return ts + "_" + id + ".jsonl"
}
