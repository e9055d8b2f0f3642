package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	flag "github.com/spf13/pflag"
)

// runGen is `mapreduce gen`: it writes a generated corpus (the one a job
// with the same kind, seed and size generates) into files under a
// directory, for jobs on --input and for tools outside allot to read the
// same input, such as a single-process baseline.
func runGen(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	kind := fs.String("kind", string(wordCount), "wordcount (text) or sort (100-byte records)")
	size := fs.String("size", "", "the corpus's size, e.g. 90MB (required)")
	seed := fs.Uint64("seed", 1, "seed of the corpus")
	out := fs.String("out", "", "directory to write the files in; created, and must not hold files already (required)")
	fileSize := fs.String("file-size", "64MB", "start a new file after this many bytes")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	n, err := parseSize(*size)
	if err != nil || n <= 0 || *out == "" {
		return fmt.Errorf("gen: --size and --out are required (--size %q)", *size)
	}
	per, err := parseSize(*fileSize)
	if err != nil || per <= 0 {
		return fmt.Errorf("gen: --file-size %q", *fileSize)
	}
	if k := jobKind(*kind); k != wordCount && k != sortJob {
		return fmt.Errorf("gen: unknown kind %q", *kind)
	}
	if err := prepareOutput(*out); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	w := &fileSeries{dir: *out, per: per}
	err = source{kind: jobKind(*kind), seed: *seed, size: n}.all(w.line)
	err = errors.Join(err, w.close())
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	fmt.Fprintf(stdout, "gen: %s %s corpus (seed %d) in %d files under %s\n", formatSize(w.total), *kind, *seed, w.files, *out)
	return nil
}

// fileSeries writes lines into part-00000, part-00001, ... under dir,
// starting a new file once one holds per bytes.
type fileSeries struct {
	dir    string
	per    int64
	f      *os.File
	w      *bufio.Writer
	inFile int64
	total  int64
	files  int
}

func (s *fileSeries) line(line []byte) error {
	if s.f == nil || s.inFile >= s.per {
		if err := s.close(); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("part-%05d", s.files)))
		if err != nil {
			return err
		}
		s.f, s.w, s.inFile = f, bufio.NewWriterSize(f, 1<<20), 0
		s.files++
	}
	s.w.Write(line)
	s.inFile += int64(len(line)) + 1
	s.total += int64(len(line)) + 1
	return s.w.WriteByte('\n')
}

func (s *fileSeries) close() error {
	if s.f == nil {
		return nil
	}
	err := errors.Join(s.w.Flush(), s.f.Close())
	s.f = nil
	return err
}
