package session

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/prime-agent/prime/session/internal/rawmem"
)

// The persistent index keeps what indexing a large session file found
// (the records, the sorted ids, the warnings, labels, name and orphans, and
// a digest of the lines of every 1 MiB block of the part indexed, see
// index_digest.go) in a file of its own
// in a cache directory, so that opening the session again reads the index
// and the lines appended since instead of the whole file. See the package
// doc ("Reading: memory and speed") for when it is trusted.

// IndexDir returns the directory where Prime keeps the indexes of large
// session files: agentDir/cache/session-index.
func IndexDir(agentDir string) string { return filepath.Join(agentDir, "cache", "session-index") }

// cacheMinBytes is the smallest session file whose index is kept: a
// smaller one is indexed in a few milliseconds.
const cacheMinBytes = 4 << 20

// racyMargin is how long before its stamp a file must have changed last
// for the stamp alone to vouch for it: a change made within the same tick
// of the file system's clock as the stamp would not show in it. A file
// system that keeps times to the second gets two seconds; one that keeps
// finer times gets 30 ms (Linux stamps files from a clock that ticks every
// 10 ms at most).
func racyMargin(changed int64) int64 {
	if changed%int64(time.Second) == 0 {
		return int64(2 * time.Second)
	}
	return int64(30 * time.Millisecond)
}

// fileStamp is what identifies a file's state (see stampOf).
type fileStamp struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// indexFile is the persistent index of one session file.
type indexFile struct {
	path string // the index file
	abs  string // the session file's absolute path
	// stamp is the session file's state when it was opened, taken at
	// stampTime, before anything was read.
	stamp     fileStamp
	stampTime int64
}

// newIndexFile returns the persistent index of the session file name
// (opened as fi), or nil when none is kept: no directory, a small file, a
// system that does not stamp files.
func newIndexFile(dir, name string, fi os.FileInfo) *indexFile {
	if dir == "" || fi.Size() < cacheMinBytes {
		return nil
	}
	st, ok := stampOf(fi)
	if !ok {
		return nil
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256([]byte(abs))
	return &indexFile{
		path: filepath.Join(dir, hex.EncodeToString(sum[:16])+".idx"), abs: abs,
		stamp: st, stampTime: time.Now().UnixNano(),
	}
}

// Layout of an index file, after the fixed part: the small part (strings,
// short lists, the blocks' digests), the records, the sorted ids, and a
// CRC-32C of all that precedes it. Version 2 has the digests of lines
// where version 1 had a CRC-32C of each block's bytes.
const (
	indexMagic   = "PRIMEIX1"
	indexVersion = 2
	indexOrder   = 0x01020304 // written in the machine's byte order
	fixedLen     = 104
	cacheMid     = 1 // flags: the last line read has no newline
	cacheDupIDs  = 2 // flags: ids repeat
)

// cached is what an index file holds.
type cached struct {
	stamp     fileStamp
	stampTime int64
	indexed   int64
	lines     int64
	headerOff int64
	flags     uint32
	abs       string
	header    []byte
	// blocks are the digests of the lines of [0, indexed) that start
	// below summed, in blocks of blockBytes, the last one maybe shorter;
	// tail is the term of the line from summed to indexed, which has no
	// newline (0 when summed is indexed). See lineTerm.
	blocks   []uint64
	summed   int64
	tail     uint64
	odd      map[int32]*oddRec
	warnings []Warning
	orphans  []int32
	labels   map[string]string
	name     string
	recs     []rec
	sorted   []uint64
	// facts are what checking the records noted of them.
	facts recFacts
}

// load returns the session the index file describes, with the lines
// appended since read, or nil when there is no usable index: missing,
// torn, of another file, or of a file whose indexed part changed. f is
// the session file, opened as fi. An index that is whole but does not
// describe the file (damaged, or crafted: see confirmCached) is also not
// used, and err says why, for a warning.
func (x *indexFile) load(name string, f *os.File, fi os.FileInfo) (s *Session, trusted bool, err error) {
	c, err := readIndexFile(x.path)
	var damaged *damagedIndexError
	if errors.As(err, &damaged) {
		return nil, false, err
	}
	if err != nil || c.abs != x.abs || c.stamp.dev != x.stamp.dev || c.stamp.ino != x.stamp.ino || c.indexed > x.stamp.size {
		return nil, false, nil
	}
	// The stamp vouches for an unchanged file, unless it was taken too
	// soon after the file's last change; otherwise every line of the
	// indexed part is read and the blocks' digests checked.
	changed := max(c.stamp.mtime, c.stamp.ctime)
	trusted = c.stamp == x.stamp && changed < c.stampTime-racyMargin(changed)
	if !trusted && !digestsMatch(f, c) {
		return nil, false, nil
	}
	h, ok, err := decodeHeader(c.header)
	if err != nil || !ok || h.Version != CurrentVersion {
		return nil, false, nil
	}
	s = &Session{
		path: name, header: h, fileVersion: h.Version, src: fileSource(f, name, fi), leaf: -1,
		recs: c.recs, odd: c.odd, warnings: c.warnings,
		lines: int(c.lines), indexed: c.indexed, midLine: c.flags&cacheMid != 0, headerOff: c.headerOff,
		scanned: c.indexed, sums: c.blocks, summed: c.summed,
	}
	if err := s.confirmCached(c); err != nil {
		return nil, false, err
	}
	return s, trusted, nil
}

// digestsMatch walks the lines of [0, c.indexed) of f, on every core, and
// reports whether their digests are the ones in c.
func digestsMatch(f *os.File, c *cached) bool {
	d, err := fileDigests(f, 0, c.indexed)
	return err == nil && d.summed == c.summed && d.tail == c.tail && slices.Equal(d.sums, c.blocks)
}

// save writes the index of s, which was read from f (file version 3), to
// the index file, replacing it at once (written aside and renamed); it is
// a cache, so a failure is not an error and nothing is synced.
func (x *indexFile) save(s *Session, f *os.File) {
	if img := x.image(s); img != nil {
		img.write(f)
	}
}

// indexImage is what an index file is made of, taken from a session so
// that the file can be written while the session goes on: nothing in it
// refers to the session's mutable state but the records and the sorted
// ids, which the session does not change in place until the image is
// written (see Session.waitSave).
type indexImage struct {
	x *indexFile
	// indexed is the part of the file indexed; sums the digests of its
	// lines that start below summed, which the session already made.
	indexed int64
	sums    []uint64
	summed  int64
	// head and tail are the small part before and after the block
	// digests; fixed is the fixed part but for the small part's length.
	head, tail encoder
	fixed      encoder
	recs       []rec
	// sorted are the sorted ids, or nil to be made from recs and oddIDs.
	sorted []uint64
	oddIDs map[int32]*oddRec
}

// image takes what the index file of s is made of, or returns nil when
// none is kept for it.
func (x *indexFile) image(s *Session) *indexImage {
	if s.fileVersion != CurrentVersion || s.indexed <= 0 {
		return nil
	}
	img := &indexImage{x: x, indexed: s.indexed, recs: s.recs[:len(s.recs):len(s.recs)]}
	img.sums, img.summed = slices.Clone(s.sums), min(s.summed, s.indexed)
	if s.ids == nil {
		img.oddIDs = make(map[int32]*oddRec, len(s.odd))
		for i, o := range s.odd {
			img.oddIDs[i] = &oddRec{id: o.id}
		}
	} else {
		img.sorted = s.ids.all()
	}
	var flags uint32
	if s.midLine {
		flags |= cacheMid
	}
	if s.dupIDs {
		flags |= cacheDupIDs
	}
	s.readMeta()
	img.head.str(x.abs)
	img.head.str(string(s.header.raw))
	t := &img.tail
	t.u32(uint32(len(s.odd)))
	for i, o := range s.odd {
		t.u32(uint32(i))
		t.str(o.typ)
		t.str(o.id)
		t.str(o.parent)
		t.str(o.ts)
	}
	t.u32(uint32(len(s.warnings)))
	for _, w := range s.warnings {
		t.u32(uint32(w.Kind))
		t.u32(uint32(w.Line))
		t.str(w.Msg)
	}
	t.u32(uint32(len(s.orphans)))
	for _, o := range s.orphans {
		t.u32(uint32(o))
	}
	t.u32(uint32(len(s.labels)))
	for k, v := range s.labels {
		t.str(k)
		t.str(v)
	}
	t.str(s.name)

	fx := &img.fixed
	fx.b = append(fx.b, indexMagic...)
	fx.native32(indexOrder)
	fx.u32(indexVersion)
	fx.u64(x.stamp.dev)
	fx.u64(x.stamp.ino)
	fx.u64(uint64(x.stamp.size))
	fx.u64(uint64(x.stamp.mtime))
	fx.u64(uint64(x.stamp.ctime))
	fx.u64(uint64(x.stampTime))
	fx.u64(uint64(s.indexed))
	fx.u64(uint64(s.lines))
	fx.u64(uint64(s.headerOff))
	fx.u32(flags)
	return img
}

// write writes the index file of the image; f is the session file, read
// for the digests of the lines the session did not sum. It reads nothing
// of the session but the image's records.
func (img *indexImage) write(f *os.File) {
	d, ok := img.digests(f)
	if !ok {
		return
	}
	blocks := d.sums
	sorted := img.sorted
	if sorted == nil {
		ids, _ := buildIDs(img.recs, img.oddIDs)
		sorted = ids.sorted
	}
	small := img.head
	small.u32(uint32(len(blocks)))
	for _, b := range blocks {
		small.u64(b)
	}
	small.u64(uint64(d.summed))
	small.u64(d.tail)
	small.b = append(small.b, img.tail.b...)
	fixed := img.fixed
	fixed.u32(uint32(len(small.b)))
	fixed.u32(uint32(len(img.recs)))
	fixed.u32(uint32(len(sorted)))
	parts := [][]byte{fixed.b, small.b, rawmem.Bytes(img.recs), rawmem.Bytes(sorted)}
	var crc uint32
	for _, p := range parts {
		crc = crc32.Update(crc, castagnoli(), p)
	}
	trailer := binary.LittleEndian.AppendUint32(nil, crc)
	x := img.x
	if err := os.MkdirAll(filepath.Dir(x.path), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(x.path), ".idx-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	for _, p := range append(parts, trailer) {
		if _, err := tmp.Write(p); err != nil {
			tmp.Close()
			return
		}
	}
	if tmp.Close() == nil {
		os.Rename(tmp.Name(), x.path)
	}
}

// digests returns the digests of the part indexed, one for each of its
// blocks: the session's, and what they lack read from f.
func (img *indexImage) digests(f io.ReaderAt) (digests, bool) {
	d, err := fileDigests(f, img.summed, img.indexed)
	if err != nil {
		return digests{}, false
	}
	blocks := img.sums
	for i, v := range d.sums {
		blocks = addDigest(blocks, d.first+int64(i), v)
	}
	n := (img.indexed + blockBytes - 1) / blockBytes
	if int64(len(blocks)) > n {
		return digests{}, false // the sums go beyond the part indexed: not the file's
	}
	d.first, d.sums = 0, append(blocks, make([]uint64, n-int64(len(blocks)))...)
	return d, true
}

// readIndexFile reads and checks an index file: its layout, its checksum,
// and that every record lies within the indexed part and links within the
// index.
func readIndexFile(path string) (*cached, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	total := fi.Size()
	r := &checkedReader{r: f}
	fixed := make([]byte, fixedLen)
	if err := r.read(fixed); err != nil {
		return nil, err
	}
	if string(fixed[:8]) != indexMagic || binary.NativeEndian.Uint32(fixed[8:]) != indexOrder ||
		binary.LittleEndian.Uint32(fixed[12:]) != indexVersion {
		return nil, errors.New("not an index file of this version")
	}
	le := binary.LittleEndian
	c := &cached{
		stamp: fileStamp{dev: le.Uint64(fixed[16:]), ino: le.Uint64(fixed[24:]), size: int64(le.Uint64(fixed[32:])),
			mtime: int64(le.Uint64(fixed[40:])), ctime: int64(le.Uint64(fixed[48:]))},
		stampTime: int64(le.Uint64(fixed[56:])), indexed: int64(le.Uint64(fixed[64:])), lines: int64(le.Uint64(fixed[72:])),
		headerOff: int64(le.Uint64(fixed[80:])), flags: le.Uint32(fixed[88:]),
	}
	smallLen, nrecs, nsorted := int64(le.Uint32(fixed[92:])), int64(le.Uint32(fixed[96:])), int64(le.Uint32(fixed[100:]))
	if fixedLen+smallLen+nrecs*recSize+nsorted*8+4 != total {
		return nil, errors.New("index file has the wrong size")
	}
	small := make([]byte, smallLen)
	if err := r.read(small); err != nil {
		return nil, err
	}
	// The records are checked as they are read, while they are in the
	// cache, against the small part: what is found counts only once the
	// checksum holds (a torn file is not a damaged one).
	smallErr := c.decodeSmall(small)
	k := recCheck{c: c}
	if smallErr != nil {
		k.err = smallErr
	} else {
		k.start(int(nrecs))
	}
	c.recs = make([]rec, nrecs)
	if err := r.readRecs(c.recs, k.recs); err != nil {
		return nil, err
	}
	c.sorted = make([]uint64, nsorted)
	if err := r.readFresh(rawmem.Bytes(c.sorted)); err != nil {
		return nil, err
	}
	sum := r.crc
	trailer := make([]byte, 4)
	if _, err := io.ReadFull(f, trailer); err != nil {
		return nil, err
	}
	if le.Uint32(trailer) != sum {
		return nil, errors.New("index file checksum mismatch")
	}
	if smallErr != nil {
		return nil, smallErr
	}
	if err := k.finish(); err != nil {
		return nil, &damagedIndexError{err}
	}
	return c, nil
}

// decodeSmall reads the small part of an index file.
func (c *cached) decodeSmall(b []byte) error {
	d := decoder{b: b}
	c.abs = d.str()
	c.header = []byte(d.str())
	c.blocks = make([]uint64, d.count(8))
	for i := range c.blocks {
		c.blocks[i] = d.u64()
	}
	c.summed, c.tail = int64(d.u64()), d.u64()
	if n := d.count(20); n > 0 {
		c.odd = make(map[int32]*oddRec, n)
		for range n {
			i := int32(d.u32())
			c.odd[i] = &oddRec{typ: d.str(), id: d.str(), parent: d.str(), ts: d.str()}
		}
	}
	c.warnings = make([]Warning, d.count(12))
	for i := range c.warnings {
		c.warnings[i] = Warning{Kind: WarningKind(d.u32()), Line: int(int32(d.u32())), Msg: d.str()}
	}
	c.orphans = make([]int32, d.count(4))
	for i := range c.orphans {
		c.orphans[i] = int32(d.u32())
	}
	if n := d.count(8); n > 0 {
		c.labels = make(map[string]string, n)
		for range n {
			k := d.str()
			c.labels[k] = d.str()
		}
	}
	c.name = d.str()
	if d.err != nil || len(d.b) != d.i {
		return errors.New("index file is damaged")
	}
	return nil
}

// recCheck makes sure the index cannot send a reader outside the indexed
// part or outside the index, and that it is consistent within itself:
// records in file order after the header without overlapping, and the
// sorted ids exactly the records' hex ids. A damaged index is rebuilt,
// never followed.
//
// It sees each record once, as it is read (recs), and notes what
// confirmCached would otherwise look through every record for
// (recFacts). The sorted ids, which are in the order of the ids, are
// checked against a copy of the records' ids (4 bytes an entry, which
// stay in the cache where the records, 48 bytes an entry, would not), so
// that reading them at random costs little.
type recCheck struct {
	c *cached
	// err is the first damage found; nothing more is checked after it.
	err error
	// end and line are where the record before ended and its line.
	end  int64
	line int32
	// odd and hex count the records with side-table strings and those
	// with hex ids.
	odd, hex int
	// ids[i] is entry i's id when hexIDs has bit i, which says it has a
	// hex id.
	ids    []uint32
	hexIDs []uint64
}

// recFacts is what checking the records of a persistent index noted of
// them, so that indexFrom need not look through them all again.
type recFacts struct {
	// unusual are the entries that are a second header or have no id,
	// which indexing warns of (warnOddEntry).
	unusual []int32
	// far are the entries whose parent is not the entry before as
	// named by its hex id: every other one records the link
	// resolveParent gives when no id repeats (see linksKept).
	far []int32
}

// start checks the small part, and makes ready for the n records, not
// yet read.
func (k *recCheck) start(n int) {
	c := k.c
	if len(c.blocks) != int((c.indexed+blockBytes-1)/blockBytes) || c.summed < 0 || c.summed > c.indexed ||
		c.headerOff < 0 || c.headerOff+int64(len(c.header)) > c.indexed {
		k.err = errors.New("index file is damaged")
		return
	}
	k.end = c.headerOff + int64(len(c.header))
	k.ids, k.hexIDs = make([]uint32, n), make([]uint64, (n+63)/64)
}

// recs checks records [from, to), just read; those before were checked.
// (Its state is kept in locals while it runs, so that it stays in
// registers.)
func (k *recCheck) recs(from, to int) {
	if k.err != nil {
		return
	}
	c := k.c
	recs, n, indexed := c.recs, int32(len(c.recs)), c.indexed
	ids, hexIDs := k.ids, k.hexIDs
	end, line, odd, hex := k.end, k.line, k.odd, k.hex
	unusual, far := c.facts.unusual, c.facts.far
	defer func() {
		k.end, k.line, k.odd, k.hex = end, line, odd, hex
		c.facts.unusual, c.facts.far = unusual, far
	}()
	for i := from; i < to; i++ {
		r := &recs[i]
		if r.off <= end || r.line <= line {
			k.err = fmt.Errorf("index file is damaged: entry %d is not after the one before it", i)
			return
		}
		end, line = r.off+int64(r.n), r.line
		if end > indexed || r.parent < -1 || r.parent >= n ||
			int(r.typ) >= len(typeNames) || int(r.role) >= len(roleNames) || r.flags&recOdd != 0 && c.odd[int32(i)] == nil ||
			r.flags&(recHexID|recNoID|recOdd) == 0 {
			// (An id neither hex nor none is in the side table.)
			k.err = fmt.Errorf("index file is damaged at entry %d", i)
			return
		}
		if r.flags&recOdd != 0 {
			odd++
		}
		if r.flags&recHexID != 0 {
			ids[i] = r.id
			hexIDs[i/64] |= 1 << (i % 64)
			hex++
		}
		if r.typ == typeSession || r.flags&recNoID != 0 {
			unusual = append(unusual, int32(i))
		}
		if i == 0 || r.parent != int32(i-1) || r.flags&(recHexParent|recNoParent) != recHexParent ||
			recs[i-1].flags&recHexID == 0 || recs[i-1].id != r.pid {
			far = append(far, int32(i))
		}
	}
}

// finish checks what the records do not say alone, once they are all
// read: the side table, the orphans and the sorted ids.
func (k *recCheck) finish() error {
	if k.err != nil {
		return k.err
	}
	c := k.c
	n := int32(len(c.recs))
	if k.odd != len(c.odd) {
		return errors.New("index file is damaged")
	}
	for _, o := range c.orphans {
		if o < 0 || o >= n {
			return errors.New("index file is damaged")
		}
	}
	// Strictly ascending, each naming an entry with a hex id and that
	// id: no entry is named twice (its id would repeat with it), so as
	// many as there are hex ids are all of them.
	if len(c.sorted) != k.hex {
		return errors.New("index file is damaged: its ids are not its entries' ids")
	}
	prev := uint64(0)
	for j, v := range c.sorted {
		i := uint32(v)
		if i >= uint32(n) || k.hexIDs[i/64]&(1<<(i%64)) == 0 || k.ids[i] != uint32(v>>32) || j > 0 && prev >= v {
			return errors.New("index file is damaged: its ids are not its entries' ids")
		}
		prev = v
	}
	return nil
}

// checkedReader reads whole parts of a file, keeping their CRC-32C.
type checkedReader struct {
	r   io.Reader
	crc uint32
}

// checkedChunk is how much checkedReader reads at a time: each piece is
// summed just after it is read, while it is still in the core's cache,
// instead of all of it read back from memory afterwards.
const checkedChunk = 256 << 10

// read fills b from the file and adds it to the CRC.
func (c *checkedReader) read(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), checkedChunk)
		if _, err := io.ReadFull(c.r, b[:n]); err != nil {
			return err
		}
		c.crc = crc32.Update(c.crc, castagnoli(), b[:n])
		b = b[n:]
	}
	return nil
}

// readRecs is readFresh into recs, a piece at a time, each piece's
// records, [from, to), given to each as soon as they are read.
func (c *checkedReader) readRecs(recs []rec, each func(from, to int)) error {
	b := rawmem.Bytes(recs)
	rawmem.Populate(b)
	const per = checkedChunk / recSize
	for from := 0; from < len(recs); from += per {
		to := min(len(recs), from+per)
		if err := c.read(b[from*recSize : to*recSize]); err != nil {
			return err
		}
		each(from, to)
	}
	return nil
}

// readFresh is read into a buffer just allocated, whose pages are given
// memory at once (rawmem.Populate) rather than a fault at a time as the
// read writes them.
func (c *checkedReader) readFresh(b []byte) error {
	rawmem.Populate(b)
	return c.read(b)
}

// encoder writes the little-endian fields of an index file.
type encoder struct{ b []byte }

func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }

// native32 writes v in the machine's byte order.
func (e *encoder) native32(v uint32) { e.b = binary.NativeEndian.AppendUint32(e.b, v) }

func (e *encoder) str(s string) {
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
}

// decoder reads what encoder wrote; past the end it reads zeros and
// records an error.
type decoder struct {
	b   []byte
	i   int
	err error
}

func (d *decoder) u32() uint32 {
	if d.i+4 > len(d.b) {
		d.err = io.ErrUnexpectedEOF
		d.i = len(d.b)
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b[d.i:])
	d.i += 4
	return v
}

// u64 reads what encoder.u64 wrote.
func (d *decoder) u64() uint64 {
	lo := uint64(d.u32())
	return lo | uint64(d.u32())<<32
}

// count reads a number of items each at least size bytes long, 0 when
// there cannot be that many.
func (d *decoder) count(size int) int {
	n := int(d.u32())
	if n*size > len(d.b)-d.i {
		d.err = io.ErrUnexpectedEOF
		return 0
	}
	return n
}

func (d *decoder) str() string {
	n := int(d.u32())
	if n > len(d.b)-d.i {
		d.err = io.ErrUnexpectedEOF
		d.i = len(d.b)
		return ""
	}
	s := string(d.b[d.i : d.i+n])
	d.i += n
	return s
}
