package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
)

// source is a job's input: files and directories, or a corpus generated
// from a seed and a size.
//
// Either way the input is a sequence of lines, and map task i of n reads
// split i. A generated corpus is cut into blocks of blockSize bytes, each
// generated from (seed, block number) alone, and split i is a contiguous
// run of blocks: a map task generates its own split, the framework can
// regenerate the whole input, and the corpus does not depend on the
// number of splits. Files are split by byte ranges over their
// concatenation (in the order listFiles gives), and a line belongs to the
// split its first byte falls in; every map task must see the files at the
// same paths.
type source struct {
	kind  jobKind  // what the generator writes
	paths []string // when set, the input's files and directories
	seed  uint64
	size  int64
}

// blockSize is the size of one generated block.
const blockSize = 64 << 10

// split calls fn with every line (without its newline) of split i of n.
// fn must not keep line after it returns.
func (s source) split(i, n int, fn func(line []byte) error) error {
	if n < 1 || i < 0 || i >= n {
		return fmt.Errorf("split %d of %d", i, n)
	}
	if len(s.paths) > 0 {
		files, err := listFiles(s.paths)
		if err != nil {
			return err
		}
		return dirSplit(files, i, n, fn)
	}
	g := newGenerator(s.kind, s.seed)
	blocks := (s.size + blockSize - 1) / blockSize
	for b := blocks * int64(i) / int64(n); b < blocks*int64(i+1)/int64(n); b++ {
		if err := g.block(b, min(blockSize, s.size-b*blockSize), fn); err != nil {
			return err
		}
	}
	return nil
}

// all calls fn with every line of the input, reading each file whole (or
// generating every block) rather than split by split, so that it checks
// the splitting too.
func (s source) all(fn func(line []byte) error) error {
	if len(s.paths) == 0 {
		return s.split(0, 1, fn)
	}
	files, err := listFiles(s.paths)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := readLines(f.path, 0, f.size, fn); err != nil {
			return err
		}
	}
	return nil
}

// dirSplit calls fn with the lines of files that start in byte range i of
// n of the files' concatenation. Lines never span two files.
func dirSplit(files []inputFile, i, n int, fn func([]byte) error) error {
	var total int64
	for _, f := range files {
		total += f.size
	}
	lo, hi := total*int64(i)/int64(n), total*int64(i+1)/int64(n)
	var off int64
	for _, f := range files {
		start, end := off, off+f.size
		off = end
		if start >= hi || end <= lo {
			continue
		}
		if err := readLines(f.path, max(lo, start)-start, min(hi, end)-start, fn); err != nil {
			return err
		}
	}
	return nil
}

// readLines calls fn with every line of the file at path that starts at
// an offset in [from, to). A line starts at offset 0 or just after a
// newline; the last line of a file may lack its newline.
func readLines(path string, from, to int64, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pos := from
	if from > 0 {
		// Start at the first line that begins at or after from: skip
		// the rest of the line that byte from-1 belongs to.
		if _, err := f.Seek(from-1, io.SeekStart); err != nil {
			return err
		}
		pos = from - 1
	}
	r := bufio.NewReaderSize(f, 64<<10)
	if from > 0 {
		skipped, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			pos += int64(len(skipped))
			skipped, err = r.ReadSlice('\n')
		}
		pos += int64(len(skipped))
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	var long []byte // a line longer than the reader's buffer
	for pos < to {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			pos += int64(len(line))
			if cbErr := fn(bytes.TrimSuffix(line, []byte{'\n'})); cbErr != nil {
				return cbErr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// generator writes a deterministic corpus: text with a Zipf-like word
// distribution for word counts, 100-byte records for sorts.
type generator struct {
	kind jobKind
	seed uint64
	// vocab holds the words back to back; word i ends at ends[i].
	vocab []byte
	ends  []int32
}

// word returns vocabulary word i.
func (g *generator) word(i uint64) []byte {
	start := int32(0)
	if i > 0 {
		start = g.ends[i-1]
	}
	return g.vocab[start:g.ends[i]]
}

// vocabStream is the random stream of the vocabulary (blocks use their
// number as stream).
const vocabStream = 1 << 63

// vocabSize is the number of distinct words the generator draws from:
// about as many as 90 MB of source code holds.
const vocabSize = 250_000

func newGenerator(kind jobKind, seed uint64) *generator {
	g := &generator{kind: kind, seed: seed}
	if kind == wordCount {
		r := rand.New(rand.NewPCG(seed, vocabStream))
		g.vocab, g.ends = make([]byte, 0, vocabSize*6), make([]int32, 0, vocabSize)
		for range vocabSize {
			for range 2 + r.IntN(8) {
				g.vocab = append(g.vocab, byte('a'+r.IntN(26)))
			}
			g.ends = append(g.ends, int32(len(g.vocab)))
		}
	}
	return g
}

// keyAlphabet is what sort keys are made of.
const keyAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Sort records: a key, a space, then a payload naming the record's block
// and line, padded to recordLen bytes with the newline.
const (
	keyLen    = 10
	recordLen = 100
)

// block calls fn with the lines of block b, about size bytes of them
// (newlines included; the last line may run over).
func (g *generator) block(b, size int64, fn func([]byte) error) error {
	r := rand.New(rand.NewPCG(g.seed, uint64(b)))
	var zipf *rand.Zipf
	if g.kind == wordCount {
		zipf = rand.NewZipf(r, 1.1, 2, uint64(len(g.ends)-1))
	}
	line := make([]byte, 0, 128)
	for n, written := 0, int64(0); written < size; n++ {
		line = line[:0]
		if g.kind == wordCount {
			for w := range 6 + r.IntN(10) {
				if w > 0 {
					line = append(line, ' ')
				}
				line = append(line, g.word(zipf.Uint64())...)
			}
		} else {
			for range keyLen {
				line = append(line, keyAlphabet[r.IntN(len(keyAlphabet))])
			}
			line = append(line, ' ')
			line = strconv.AppendInt(line, b, 16)
			line = append(line, ':')
			line = strconv.AppendInt(line, int64(n), 16)
			line = append(line, ' ')
			for len(line) < recordLen-1 {
				line = append(line, byte('a'+n%26))
			}
		}
		written += int64(len(line)) + 1
		if err := fn(line); err != nil {
			return err
		}
	}
	return nil
}
