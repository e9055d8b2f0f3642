package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	flag "github.com/spf13/pflag"
)

// reduceArgs are a reduce task's arguments.
type reduceArgs struct {
	kind      jobKind
	partition int
	reducers  int
	coflow    string
	// maps is the job's number of map tasks; from names each one's
	// output.
	maps   int
	from   []mapOutput
	memMiB int64
	// output is the job's output directory; empty leaves the output in
	// the reducer's sandbox.
	output string
}

// args renders r for the task's command line.
func (r reduceArgs) args() []string {
	out := []string{"reduce", "--kind", string(r.kind), "--partition", strconv.Itoa(r.partition),
		"--reducers", strconv.Itoa(r.reducers), "--maps", strconv.Itoa(r.maps),
		"--memory", strconv.FormatInt(r.memMiB, 10)}
	if r.coflow != "" {
		out = append(out, "--coflow", r.coflow)
	}
	if r.output != "" {
		out = append(out, "--output", r.output)
	}
	for _, m := range r.from {
		out = append(out, "--from", m.String())
	}
	return out
}

// outputName is reducer r's file in an output directory, as Hadoop names
// it.
func outputName(r int) string { return fmt.Sprintf("part-r-%05d", r) }

// shuffleDir is where a reducer keeps the partition files it fetched.
const shuffleDir = "shuffle"

// runReduce is `mapreduce reduce`: it fetches its partition from every
// map task's sandbox to its own disk (the shuffle), merges the sorted
// files (summing a word count's counts), and writes its output: in the
// job's output directory when given, else in its sandbox.
func runReduce(ctx context.Context, argv []string, env getenv, stdout io.Writer) error {
	start := time.Now()
	fs := flag.NewFlagSet("reduce", flag.ContinueOnError)
	var a reduceArgs
	kind := fs.String("kind", string(wordCount), "wordcount or sort")
	fs.IntVar(&a.partition, "partition", 0, "the partition this task reduces")
	fs.IntVar(&a.reducers, "reducers", 1, "the number of reduce partitions")
	fs.IntVar(&a.maps, "maps", 0, "the number of map outputs to fetch")
	fs.StringVar(&a.coflow, "coflow", "", "the shuffle's coflow, which the agents order fetches by")
	fs.Int64Var(&a.memMiB, "memory", 0, "the task's memory in MiB, which sets its buffers")
	fs.StringVar(&a.output, "output", "", "the job's output directory (default: this task's sandbox)")
	var from outputList
	fs.Var(&from, "from", "a map task's output, HOST:PORT/SANDBOX (repeated)")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	a.kind, a.from = jobKind(*kind), from
	if a.partition < 0 || a.partition >= a.reducers {
		return fmt.Errorf("reduce: partition %d of %d", a.partition, a.reducers)
	}
	if len(a.from) != a.maps {
		return fmt.Errorf("reduce: %d map outputs named, want %d", len(a.from), a.maps)
	}
	if a.kind != wordCount && a.kind != sortJob {
		return fmt.Errorf("reduce: unknown kind %q", a.kind)
	}
	token := env(envFilesToken)
	if token == "" {
		return fmt.Errorf("reduce: no %s: the agents need a files secret for the shuffle", envFilesToken)
	}
	buffer := bufferFor(a.memMiB)
	dir := sandboxDir(env)
	files := newFileClient(token).inCoflow(a.coflow, env(envAgentID))
	c := taskCounters{Stage: stageReduce, MemoryLimit: a.memMiB << 20}
	paths, stats, err := shuffle(ctx, files, a, dir, env(envAgentHTTP))
	c.Shuffle = &stats
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Join(dir, shuffleDir))
	if err := a.merge(paths, buffer, dir, env, &c); err != nil {
		return err
	}
	if err := c.finish(dir, start); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reduce %s partition %d: %d partition files (%d from other agents), %d bytes in, %d bytes out\n",
		a.kind, a.partition, stats.Partitions, stats.Remote, stats.Bytes, c.BytesOut)
	return nil
}

// shuffle fetches the reducer's partition from every map output into
// files under dir, and returns their paths. When some outputs cannot be
// fetched it leaves lost.json naming them, for the framework to run those
// maps again.
func shuffle(ctx context.Context, files *fileClient, a reduceArgs, dir, own string) ([]string, shuffleStats, error) {
	if err := os.MkdirAll(filepath.Join(dir, shuffleDir), 0o755); err != nil {
		return nil, shuffleStats{}, err
	}
	paths, stats, lost, err := fetchPartitions(ctx, files, a.from, a.partition, filepath.Join(dir, shuffleDir), own)
	if err == nil {
		return paths, stats, nil
	}
	if len(lost) > 0 {
		rep := lostOutputs{Maps: lost}
		for _, i := range lost {
			rep.Sandboxes = append(rep.Sandboxes, a.from[i].Sandbox)
		}
		js, _ := json.Marshal(rep)
		if werr := writeFileAtomic(filepath.Join(dir, lostFile), js); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return nil, stats, err
}

// merge merges the fetched partition files into the reducer's output.
func (a reduceArgs) merge(paths []string, buffer int64, dir string, env getenv, c *taskCounters) error {
	var srcs []io.Reader
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		srcs = append(srcs, f)
	}
	target, tmp := filepath.Join(dir, outputFile), ""
	if a.output != "" {
		// Each attempt writes its own file and renames it into place,
		// as Hadoop's output committer does: attempts never see each
		// other's halves, and any finished attempt's file is as good as
		// another's.
		attempt := filepath.Base(dir)
		if id := env(envTaskID); id != "" {
			attempt = id
		}
		tmp = filepath.Join(a.output, tempOutputDir, attempt, outputName(a.partition))
		if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
			return fmt.Errorf("reduce: output: %w", err)
		}
		target = filepath.Join(a.output, outputName(a.partition))
	}
	write := func(w *bufio.Writer) error {
		emit := func(line []byte) error {
			c.RecordsOut++
			c.BytesOut += int64(len(line)) + 1
			w.Write(line)
			return w.WriteByte('\n')
		}
		return a.reduceLines(srcs, buffer, c, emit)
	}
	if tmp == "" {
		return writeLinesAtomic(target, write)
	}
	if err := writeLinesAtomic(tmp, write); err != nil {
		return fmt.Errorf("reduce: output: %w", err)
	}
	defer os.Remove(filepath.Dir(tmp))
	return os.Rename(tmp, target)
}

// tempOutputDir holds reducers' attempts in an output directory until
// each renames its file into place.
const tempOutputDir = "_temporary"

// reduceLines merges srcs into emit: a sort's records as they come, a
// word count's words once each with their counts summed, checking that
// each word is this reducer's.
func (a reduceArgs) reduceLines(srcs []io.Reader, buffer int64, c *taskCounters, emit func([]byte) error) error {
	bufSize := mergeBuffer(buffer, len(srcs))
	count := func(line []byte) error {
		c.RecordsIn++
		c.BytesIn += int64(len(line)) + 1
		return nil
	}
	if a.kind == sortJob {
		return mergeLines(srcs, bufSize, func(line []byte) error {
			count(line)
			return emit(line)
		})
	}
	var line []byte
	sum := &countSummer{out: func(word []byte, n int64) error {
		if p := wordPartition(word, a.reducers); p != a.partition {
			return fmt.Errorf("reduce: word %q belongs to partition %d, not %d", word, p, a.partition)
		}
		line = appendCount(line[:0], word, n)
		return emit(line)
	}}
	err := mergeLines(srcs, bufSize, func(l []byte) error {
		count(l)
		return sum.add(l)
	})
	if err != nil {
		return fmt.Errorf("reduce: %w", err)
	}
	return sum.flush()
}

// fetchPartitions downloads partition part from every map output into
// dir, a few at a time; own is the file server of the reducer's agent.
// When some fetches fail it returns, with the error, the indexes of the
// outputs that are gone as far as it can tell (not refused for the
// token, and not cut short by ctx).
func fetchPartitions(ctx context.Context, c *fileClient, from []mapOutput, part int, dir, own string) ([]string, shuffleStats, []int, error) {
	stats := shuffleStats{Agent: own}
	paths := make([]string, len(from))
	sizes := make([]int64, len(from))
	errs := make([]error, len(from))
	sem := make(chan struct{}, fetchParallel)
	var wg sync.WaitGroup
	for i, m := range from {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			paths[i] = filepath.Join(dir, "map-"+strconv.Itoa(i))
			sizes[i], errs[i] = c.download(ctx, m.Addr, m.Sandbox+"/"+partFile+strconv.Itoa(part), paths[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		var lost []int
		for i, e := range errs {
			if e != nil && !errors.Is(e, errPermanent) && ctx.Err() == nil {
				lost = append(lost, i)
			}
		}
		return nil, stats, lost, fmt.Errorf("shuffle: %w", err)
	}
	for i, m := range from {
		stats.Partitions++
		stats.Bytes += sizes[i]
		if m.Addr != stats.Agent {
			stats.Remote++
			stats.RemoteBytes += sizes[i]
		}
	}
	return paths, stats, nil, nil
}
