package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"
)

// mapArgs are a map task's arguments.
type mapArgs struct {
	kind     jobKind
	src      source
	split    int
	splits   int
	reducers int
	bounds   bounds
	// memMiB is the task's memory request, which bounds its buffer.
	memMiB int64
}

// args renders a for the task's command line.
func (a mapArgs) args() []string {
	out := []string{"map", "--kind", string(a.kind), "--split", strconv.Itoa(a.split),
		"--splits", strconv.Itoa(a.splits), "--reducers", strconv.Itoa(a.reducers),
		"--memory", strconv.FormatInt(a.memMiB, 10)}
	if len(a.src.paths) > 0 {
		out = append(out, "--input", strings.Join(a.src.paths, ","))
	} else {
		out = append(out, "--seed", strconv.FormatUint(a.src.seed, 10), "--size", strconv.FormatInt(a.src.size, 10))
	}
	if a.kind == sortJob && a.reducers > 1 {
		out = append(out, "--bounds", a.bounds.String())
	}
	return out
}

// runMap is `mapreduce map`: it reads its split and writes one sorted
// partition file per reducer in its sandbox, spilling to disk whenever
// its buffer fills.
func runMap(argv []string, env getenv, stdout io.Writer) error {
	start := time.Now()
	fs := flag.NewFlagSet("map", flag.ContinueOnError)
	var a mapArgs
	kind := fs.String("kind", string(wordCount), "wordcount or sort")
	fs.IntVar(&a.split, "split", 0, "the split this task reads")
	fs.IntVar(&a.splits, "splits", 1, "the number of splits (map tasks)")
	fs.IntVar(&a.reducers, "reducers", 1, "the number of reduce partitions")
	input := fs.String("input", "", "input files and directories, comma-separated")
	fs.Uint64Var(&a.src.seed, "seed", 1, "seed of the generated input")
	fs.Int64Var(&a.src.size, "size", 0, "size of the generated input in bytes")
	fs.Int64Var(&a.memMiB, "memory", 0, "the task's memory in MiB, which sets its buffer")
	rawBounds := fs.String("bounds", "", "sort: the partition boundaries")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	a.kind, a.src.kind = jobKind(*kind), jobKind(*kind)
	a.src.paths = splitList(*input)
	if a.reducers < 1 {
		return fmt.Errorf("map: %d reducers", a.reducers)
	}
	if a.kind != wordCount && a.kind != sortJob {
		return fmt.Errorf("map: unknown kind %q", a.kind)
	}
	buffer := bufferFor(a.memMiB)
	dir := sandboxDir(env)
	rs, err := newRuns(filepath.Join(dir, spillDir), a.reducers)
	if err != nil {
		return err
	}
	c := taskCounters{Stage: stageMap, MemoryLimit: a.memMiB << 20}
	switch a.kind {
	case wordCount:
		err = mapWordCount(a, rs, buffer, dir, &c)
	case sortJob:
		var b bounds
		if b, err = parseBounds(*rawBounds, a.reducers); err == nil {
			err = mapSort(a, b, rs, buffer, dir, &c)
		}
	}
	os.RemoveAll(rs.dir)
	if err != nil {
		return err
	}
	c.Spills, c.SpilledBytes = rs.spills, rs.bytes
	if err := c.finish(dir, start); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "map %s split %d/%d: %d lines, %d bytes in %d partitions, %d spills\n",
		a.kind, a.split, a.splits, c.RecordsIn, c.BytesOut, a.reducers, c.Spills)
	return nil
}

// spillDir is where a task keeps its spills, in its sandbox.
const spillDir = "spill"

// mapWordCount counts the words of the split in a table, spilling it
// sorted by partition whenever it outgrows buffer, and writes each
// partition's counts, summed over the spills.
func mapWordCount(a mapArgs, rs *runs, buffer int64, dir string, c *taskCounters) error {
	t := newWordTable()
	spill := func() error {
		for p, ids := range t.partitioned(a.reducers) {
			if err := rs.write(p, t.lines(ids)); err != nil {
				return err
			}
		}
		rs.spills++
		t.reset()
		return nil
	}
	var scratch []byte
	err := a.src.split(a.split, a.splits, func(line []byte) error {
		c.RecordsIn++
		c.BytesIn += int64(len(line)) + 1
		scratch = eachWord(line, scratch, t.add)
		if t.bytes > buffer {
			return spill()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if rs.spills == 0 {
		// Nothing spilled: the table is each partition's output.
		parts := t.partitioned(a.reducers)
		return writeParts(dir, a.reducers, c, func(p int, emit func([]byte) error) error {
			return t.lines(parts[p])(emit)
		})
	}
	if err := spill(); err != nil {
		return err
	}
	return writeParts(dir, a.reducers, c, func(p int, emit func([]byte) error) error {
		var line []byte
		sum := &countSummer{out: func(word []byte, n int64) error {
			line = appendCount(line[:0], word, n)
			return emit(line)
		}}
		if err := rs.merge(p, mergeBuffer(buffer, len(rs.paths[p])), sum.add); err != nil {
			return err
		}
		return sum.flush()
	})
}

// mapSort range-partitions the split's records by b, buffering them and
// spilling each partition's sorted records whenever the buffer fills, and
// writes each partition's records sorted.
func mapSort(a mapArgs, b bounds, rs *runs, buffer int64, dir string, c *taskCounters) error {
	buf := newLineBuffer(buffer)
	spill := func() error {
		for p, lines := range buf.sorted(a.reducers) {
			if err := rs.write(p, emitAll(lines)); err != nil {
				return err
			}
		}
		rs.spills++
		buf.reset()
		return nil
	}
	err := a.src.split(a.split, a.splits, func(line []byte) error {
		c.RecordsIn++
		c.BytesIn += int64(len(line)) + 1
		buf.add(b.partition(line), line)
		if buf.size() > buffer {
			return spill()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if rs.spills == 0 {
		parts := buf.sorted(a.reducers)
		return writeParts(dir, a.reducers, c, func(p int, emit func([]byte) error) error {
			return emitAll(parts[p])(emit)
		})
	}
	if err := spill(); err != nil {
		return err
	}
	return writeParts(dir, a.reducers, c, func(p int, emit func([]byte) error) error {
		return rs.merge(p, mergeBuffer(buffer, len(rs.paths[p])), emit)
	})
}

// emitAll passes lines on in order.
func emitAll(lines [][]byte) func(emit func([]byte) error) error {
	return func(emit func([]byte) error) error {
		for _, l := range lines {
			if err := emit(l); err != nil {
				return err
			}
		}
		return nil
	}
}

// mergeBuffer is the read buffer of each of n merged files: the task's
// buffer shared among them, between 4KB and 1MB each.
func mergeBuffer(buffer int64, n int) int {
	return int(min(max(buffer/int64(max(n, 1)), 4<<10), 1<<20))
}

// writeParts writes partition file part-<p> for every partition from
// lines(p), each atomically, counting what it writes.
func writeParts(dir string, partitions int, c *taskCounters, lines func(p int, emit func([]byte) error) error) error {
	for p := range partitions {
		path := filepath.Join(dir, partFile+strconv.Itoa(p))
		err := writeLinesAtomic(path, func(w *bufio.Writer) error {
			return lines(p, func(line []byte) error {
				c.RecordsOut++
				c.BytesOut += int64(len(line)) + 1
				w.Write(line)
				return w.WriteByte('\n')
			})
		})
		if err != nil {
			return fmt.Errorf("map: partition %d: %w", p, err)
		}
	}
	return nil
}

// writeLinesAtomic writes path through a temporary file, so that readers
// never see part of it.
func writeLinesAtomic(path string, write func(w *bufio.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
