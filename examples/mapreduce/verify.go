package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// verify reads job j's reduce outputs through the agents' file servers
// and checks them against a single-process computation over the same
// input: the word counts must be equal; a sort's outputs, concatenated in
// partition order, must be sorted and hold the input's records (same
// count and order-independent checksum). It returns a description of the
// result and the reducers' summed shuffle statistics; the error describes
// the first mismatch.
func verify(ctx context.Context, j *runJob, f *roleFramework, files *fileClient) (string, shuffleStats, error) {
	var stats shuffleStats
	outputs := make([][]byte, j.spec.Reducers)
	for r := range j.spec.Reducers {
		fin, sandbox, ok := f.output(j.spec.ID, stageReduce, r)
		if !ok {
			return "", stats, fmt.Errorf("reducer %d: no finished attempt known", r)
		}
		data, err := files.get(ctx, fin.addr, sandbox+"/"+outputFile)
		if err != nil {
			return "", stats, fmt.Errorf("reducer %d: %w", r, err)
		}
		outputs[r] = data
		raw, err := files.get(ctx, fin.addr, sandbox+"/"+shuffleFile)
		var s shuffleStats
		if err == nil {
			err = json.Unmarshal(raw, &s)
		}
		if err != nil {
			return "", stats, fmt.Errorf("reducer %d: shuffle statistics: %w", r, err)
		}
		stats.Partitions += s.Partitions
		stats.Bytes += s.Bytes
		stats.Remote += s.Remote
		stats.RemoteBytes += s.RemoteBytes
	}
	if j.spec.Kind == wordCount {
		verdict, err := verifyWordCount(j.src, outputs)
		return verdict, stats, err
	}
	verdict, err := verifySort(j.src, outputs)
	return verdict, stats, err
}

// verifyWordCount compares the reducers' counts with a count of src.
func verifyWordCount(src source, outputs [][]byte) (string, error) {
	got := counts{}
	for r, out := range outputs {
		if err := got.read(bytes.NewReader(out)); err != nil {
			return "", fmt.Errorf("reducer %d output: %w", r, err)
		}
	}
	want := counts{}
	if err := src.all(func(line []byte) error { want.addWords(line); return nil }); err != nil {
		return "", fmt.Errorf("reading the input: %w", err)
	}
	if d := got.diff(want); d != "" {
		return "", fmt.Errorf("word counts differ from a single-process count: %s", d)
	}
	var top []string
	for _, w := range want.top(3) {
		top = append(top, fmt.Sprintf("%s %d", w, want[w]))
	}
	return fmt.Sprintf("word counts verified: %d words, %d distinct, as a single-process count; most frequent: %s",
		want.total(), len(want), strings.Join(top, ", ")), nil
}

// verifySort checks that the reducers' outputs, in partition order, are
// sorted and a permutation of src's records.
func verifySort(src source, outputs [][]byte) (string, error) {
	var c sortCheck
	for r, out := range outputs {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			return "", fmt.Errorf("reducer %d output does not end in a newline", r)
		}
		where := fmt.Sprintf("partition %d", r)
		for len(out) > 0 {
			line, rest, _ := bytes.Cut(out, []byte{'\n'})
			c.add(line, where)
			out = rest
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
		c.Records, plural(len(outputs), "partition"), c.Sum), nil
}
