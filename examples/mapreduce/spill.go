package main

import (
	"bufio"
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// External sort. A task's memory is bounded by its buffer, not by its
// input: map output collects in a buffer that, once full, is sorted and
// written to disk as a run (a spill); at the end the runs of each
// partition are merged into one sorted file. Reducers merge the sorted
// partition files they fetched the same way. Every file involved is
// newline-separated lines in bytewise order: records for a sort, and
// "word<TAB>count" for a word count, where the tab sorts below every
// character a word may hold, so lines sort by word.

// lineBuffer holds lines of several partitions in one arena, each line
// followed by its newline. The arena grows by doubling up to the buffer's
// size and no further: spilling, not growing, is what a full buffer does.
type lineBuffer struct {
	data   []byte
	limit  int
	starts []int
	parts  []int32
}

func newLineBuffer(size int64) *lineBuffer {
	return &lineBuffer{limit: int(size), data: make([]byte, 0, min(int(size), 1<<20))}
}

func (b *lineBuffer) add(part int, line []byte) {
	if need := len(b.data) + len(line) + 1; need > cap(b.data) {
		grown := make([]byte, len(b.data), max(need, min(2*cap(b.data), b.limit)))
		copy(grown, b.data)
		b.data = grown
	}
	b.starts = append(b.starts, len(b.data))
	b.parts = append(b.parts, int32(part))
	b.data = append(b.data, line...)
	b.data = append(b.data, '\n')
}

// lineOverhead is what a line costs beyond its bytes: its start, its
// partition, and its place in the sorted order.
const lineOverhead = 8 + 4 + 24

// size is the memory the buffer's lines take, roughly.
func (b *lineBuffer) size() int64 { return int64(len(b.data) + lineOverhead*len(b.starts)) }

func (b *lineBuffer) line(i int) []byte {
	end := len(b.data)
	if i+1 < len(b.starts) {
		end = b.starts[i+1]
	}
	return b.data[b.starts[i] : end-1]
}

// sorted returns the lines of each of n partitions in bytewise order.
func (b *lineBuffer) sorted(n int) [][][]byte {
	count := make([]int, n)
	for _, p := range b.parts {
		count[p]++
	}
	out := make([][][]byte, n)
	for p := range out {
		out[p] = make([][]byte, 0, count[p])
	}
	for i, p := range b.parts {
		out[p] = append(out[p], b.line(i))
	}
	for _, lines := range out {
		slices.SortFunc(lines, bytes.Compare)
	}
	return out
}

func (b *lineBuffer) reset() { b.data, b.starts, b.parts = b.data[:0], b.starts[:0], b.parts[:0] }

// runs are the spilled, sorted runs of a task's partitions.
type runs struct {
	dir   string
	paths [][]string // by partition
	// spills counts the spills; bytes what they wrote.
	spills int
	bytes  int64
}

func newRuns(dir string, partitions int) (*runs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &runs{dir: dir, paths: make([][]string, partitions)}, nil
}

// write writes one sorted run of partition part from lines (already in
// order).
func (r *runs) write(part int, lines func(emit func([]byte) error) error) error {
	path := filepath.Join(r.dir, fmt.Sprintf("run-%d-%d", part, len(r.paths[part])))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := &countingWriter{w: f}
	w := bufio.NewWriterSize(cw, 64<<10)
	err = lines(func(line []byte) error {
		w.Write(line)
		return w.WriteByte('\n')
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("spill: %w", err)
	}
	r.paths[part] = append(r.paths[part], path)
	r.bytes += cw.n
	return nil
}

// merge merges partition part's runs into emit, and removes them.
func (r *runs) merge(part int, bufSize int, emit func([]byte) error) error {
	var srcs []io.Reader
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	for _, p := range r.paths[part] {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		files = append(files, f)
		srcs = append(srcs, f)
	}
	return mergeLines(srcs, bufSize, emit)
}

// countingWriter counts what passes through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// mergeLines merges sorted newline-separated streams into one sorted
// sequence of lines (without newlines), reading each through a buffer of
// bufSize bytes. A line passed to emit is valid until emit returns. Lines
// that compare equal come out in the order of their sources.
func mergeLines(srcs []io.Reader, bufSize int, emit func([]byte) error) error {
	h := &lineHeap{}
	for i, src := range srcs {
		c := &cursor{r: bufio.NewReaderSize(src, max(bufSize, 4096)), src: i}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h.items = append(h.items, c)
		}
	}
	heap.Init(h)
	for len(h.items) > 0 {
		c := h.items[0]
		if err := emit(c.line); err != nil {
			return err
		}
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// cursor is the current line of one merged stream.
type cursor struct {
	r    *bufio.Reader
	src  int
	line []byte
	long []byte // a line longer than the reader's buffer
	// unterminated is set when the stream ended without a newline.
	unterminated bool
}

// next reads the next line; false at the end of the stream.
func (c *cursor) next() (bool, error) {
	line, err := c.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		c.long = append(c.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = c.r.ReadSlice('\n')
			c.long = append(c.long, line...)
		}
		line = c.long
	}
	switch {
	case err == io.EOF && len(line) == 0:
		return false, nil
	case err != nil && err != io.EOF:
		return false, err
	}
	c.unterminated = !bytes.HasSuffix(line, []byte{'\n'})
	c.line = bytes.TrimSuffix(line, []byte{'\n'})
	return true, nil
}

// eachLine calls fn with every line of r, numbered from 1, without its
// newline; line is valid until fn returns. A last line without its
// newline is an error.
func eachLine(r io.Reader, fn func(n int, line []byte) error) error {
	c := &cursor{r: bufio.NewReaderSize(r, 64<<10)}
	for n := 1; ; n++ {
		ok, err := c.next()
		if !ok || err != nil {
			return err
		}
		if c.unterminated {
			return fmt.Errorf("line %d: no newline at the end", n)
		}
		if err := fn(n, c.line); err != nil {
			return err
		}
	}
}

type lineHeap struct{ items []*cursor }

func (h *lineHeap) Len() int { return len(h.items) }
func (h *lineHeap) Less(i, j int) bool {
	if d := bytes.Compare(h.items[i].line, h.items[j].line); d != 0 {
		return d < 0
	}
	return h.items[i].src < h.items[j].src
}
func (h *lineHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *lineHeap) Push(x any)    { h.items = append(h.items, x.(*cursor)) }
func (h *lineHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// countSummer sums the counts of consecutive "word<TAB>count" lines of
// one word, as a merge of sorted count files delivers them, and passes
// each word's total on.
type countSummer struct {
	word []byte
	n    int64
	out  func(word []byte, n int64) error
	// lines counts the lines read.
	lines int64
}

func (s *countSummer) add(line []byte) error {
	s.lines++
	word, num, ok := bytes.Cut(line, []byte{'\t'})
	k, err := strconv.ParseInt(string(num), 10, 64)
	if !ok || err != nil || len(word) == 0 || k <= 0 {
		return fmt.Errorf("line %q: want word<TAB>count", clip(line))
	}
	if s.n > 0 && bytes.Equal(word, s.word) {
		s.n += k
		return nil
	}
	if err := s.flush(); err != nil {
		return err
	}
	s.word, s.n = append(s.word[:0], word...), k
	return nil
}

// flush passes on the word in hand; call it once more at the end.
func (s *countSummer) flush() error {
	if s.n == 0 {
		return nil
	}
	n := s.n
	s.n = 0
	return s.out(s.word, n)
}

// appendCount renders a "word<TAB>count" line.
func appendCount[W string | []byte](dst []byte, word W, n int64) []byte {
	dst = append(dst, word...)
	dst = append(dst, '\t')
	return strconv.AppendInt(dst, n, 10)
}
