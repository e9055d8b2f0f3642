package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// readOutput passes reducer r's output of job j to read as it arrives:
// from the job's output directory, or through the file server of the
// reducer's agent.
func readOutput(ctx context.Context, j *runJob, f *roleFramework, files *fileClient, r int, read func(io.Reader) error) error {
	if j.output != "" {
		fh, err := os.Open(filepath.Join(j.output, outputName(r)))
		if err != nil {
			return err
		}
		defer fh.Close()
		return read(fh)
	}
	fin, sandbox, ok := f.output(j.spec.ID, stageReduce, r)
	if !ok {
		return errors.New("no finished attempt known")
	}
	return files.stream(ctx, fin.addr, sandbox+"/"+outputFile, read)
}

// verify checks job j's output against a single-process computation over
// the same input: the word counts must be equal; a sort's outputs,
// concatenated in partition order, must be sorted and hold the input's
// records (same count and order-independent checksum). It reads one
// reducer's output at a time as it streams in, and holds none of it: a
// word count's check holds the input's distinct words, a sort's a
// checksum. It returns a description of the result; the error describes
// the first mismatch.
func verify(ctx context.Context, j *runJob, f *roleFramework, files *fileClient) (string, error) {
	if j.spec.Kind == wordCount {
		return verifyWordCount(j.src, j.spec.Reducers, func(r int, read func(io.Reader) error) error {
			return readOutput(ctx, j, f, files, r, read)
		})
	}
	return verifySort(j.src, j.spec.Reducers, func(r int, read func(io.Reader) error) error {
		return readOutput(ctx, j, f, files, r, read)
	})
}

// outputsReader reads reducer r's output.
type outputsReader func(r int, read func(io.Reader) error) error

// verifyWordCount compares the reducers' counts with a count of src: each
// reducer's words in order, each its own and counted as in the input,
// and every word of the input in some reducer's output.
func verifyWordCount(src source, reducers int, outputs outputsReader) (string, error) {
	want := counts{}
	var scratch []byte
	err := src.all(func(line []byte) error {
		scratch = eachWord(line, scratch, func(w []byte) { want[string(w)]++ })
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading the input: %w", err)
	}
	total, distinct := want.total(), len(want)
	var top []string
	for _, w := range want.top(3) {
		top = append(top, fmt.Sprintf("%s %d", w, want[w]))
	}
	for r := range reducers {
		err := outputs(r, func(out io.Reader) error { return checkCounts(out, r, reducers, want) })
		if err != nil {
			return "", fmt.Errorf("reducer %d output: %w", r, err)
		}
	}
	for w, n := range want {
		return "", fmt.Errorf("word counts differ from a single-process count: word %q: counted 0, want %d", w, n)
	}
	return fmt.Sprintf("word counts verified: %d words, %d distinct, as a single-process count; most frequent: %s",
		total, distinct, strings.Join(top, ", ")), nil
}

// checkCounts checks reducer r's "word<TAB>count" lines against want,
// removing each word it finds from want.
func checkCounts(out io.Reader, r, reducers int, want counts) error {
	var prev []byte
	return eachLine(out, func(n int, line []byte) error {
		word, num, ok := bytes.Cut(line, []byte{'\t'})
		k, perr := strconv.ParseInt(string(num), 10, 64)
		switch {
		case !ok || perr != nil || len(word) == 0 || k <= 0:
			return fmt.Errorf("line %d: %q: want word<TAB>count", n, clip(line))
		case n > 1 && bytes.Compare(prev, word) >= 0:
			return fmt.Errorf("line %d: word %q after %q: not in order", n, word, prev)
		case wordPartition(word, reducers) != r:
			return fmt.Errorf("word %q belongs to reducer %d", word, wordPartition(word, reducers))
		case want[string(word)] != k:
			return fmt.Errorf("word counts differ from a single-process count: word %q: counted %d, want %d", word, k, want[string(word)])
		}
		delete(want, string(word))
		prev = append(prev[:0], word...)
		return nil
	})
}

// verifySort checks that the reducers' outputs, in partition order, are
// sorted and a permutation of src's records.
func verifySort(src source, reducers int, outputs outputsReader) (string, error) {
	var c sortCheck
	for r := range reducers {
		where := fmt.Sprintf("partition %d", r)
		err := outputs(r, func(out io.Reader) error {
			return eachLine(out, func(_ int, line []byte) error {
				c.add(line, where)
				return nil
			})
		})
		if err != nil {
			return "", fmt.Errorf("reducer %d output: %w", r, err)
		}
	}
	var want digest
	if err := src.all(func(line []byte) error { want.add(line); return nil }); err != nil {
		return "", fmt.Errorf("reading the input: %w", err)
	}
	switch {
	case c.disorder != "":
		return "", fmt.Errorf("sort check: output not sorted: %s", c.disorder)
	case c.digest != want:
		return "", fmt.Errorf("sort check: output is not a permutation of the input: %d records (checksum %016x), input %d (checksum %016x)",
			c.Records, c.Sum, want.Records, want.Sum)
	}
	return fmt.Sprintf("sort check verified: %d records globally sorted across %s, a permutation of the input (checksum %016x)",
		c.Records, plural(reducers, "partition"), c.Sum), nil
}
