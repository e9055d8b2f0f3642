package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	flag "github.com/spf13/pflag"
)

// Environment the agent gives every task.
const (
	envSandbox    = "ALLOT_SANDBOX"
	envAgentHTTP  = "ALLOT_AGENT_HTTP"
	envFilesToken = "ALLOT_FILES_TOKEN"
	envAgentID    = "ALLOT_AGENT_ID"
)

// Files the workers write in their sandboxes.
const (
	// partFile is a map task's output for one reduce partition.
	partFile = "part-"
	// outputFile is a reduce task's result; shuffleFile its shuffle
	// statistics (shuffleStats as JSON).
	outputFile  = "output"
	shuffleFile = "shuffle.json"
	// lostFile is what a reducer that could not fetch some map outputs
	// leaves (lostOutputs as JSON), for the framework to run those maps
	// again.
	lostFile = "lost.json"
)

// lostOutputs names the map outputs a reducer could not fetch: map
// indexes, and the sandboxes it tried them in (a map that has run again
// since has another).
type lostOutputs struct {
	Maps      []int    `json:"maps"`
	Sandboxes []string `json:"sandboxes"`
}

// fetchParallel bounds a reducer's concurrent fetches.
const fetchParallel = 4

// mapArgs are a map task's arguments.
type mapArgs struct {
	kind     jobKind
	src      source
	split    int
	splits   int
	reducers int
	bounds   bounds
}

// args renders a for the task's command line.
func (a mapArgs) args() []string {
	out := []string{"map", "--kind", string(a.kind), "--split", strconv.Itoa(a.split),
		"--splits", strconv.Itoa(a.splits), "--reducers", strconv.Itoa(a.reducers)}
	if a.src.dir != "" {
		out = append(out, "--input", a.src.dir)
	} else {
		out = append(out, "--seed", strconv.FormatUint(a.src.seed, 10), "--size", strconv.FormatInt(a.src.size, 10))
	}
	if a.kind == sortJob && a.reducers > 1 {
		out = append(out, "--bounds", a.bounds.String())
	}
	return out
}

// getenv reads the worker's environment (os.Getenv).
type getenv func(string) string

// runMap is `mapreduce map`: it reads its split and writes one partition
// file per reducer in its sandbox.
func runMap(argv []string, env getenv, stdout io.Writer) error {
	fs := flag.NewFlagSet("map", flag.ContinueOnError)
	var a mapArgs
	kind := fs.String("kind", string(wordCount), "wordcount or sort")
	fs.IntVar(&a.split, "split", 0, "the split this task reads")
	fs.IntVar(&a.splits, "splits", 1, "the number of splits (map tasks)")
	fs.IntVar(&a.reducers, "reducers", 1, "the number of reduce partitions")
	fs.StringVar(&a.src.dir, "input", "", "input directory")
	fs.Uint64Var(&a.src.seed, "seed", 1, "seed of the generated input")
	fs.Int64Var(&a.src.size, "size", 0, "size of the generated input in bytes")
	rawBounds := fs.String("bounds", "", "sort: the partition boundaries")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	a.kind, a.src.kind = jobKind(*kind), jobKind(*kind)
	if a.reducers < 1 {
		return fmt.Errorf("map: %d reducers", a.reducers)
	}
	parts := make([]bytes.Buffer, a.reducers)
	lines := 0
	switch a.kind {
	case wordCount:
		c := counts{}
		if err := a.src.split(a.split, a.splits, func(line []byte) error { lines++; c.addWords(line); return nil }); err != nil {
			return err
		}
		for r, p := range c.partition(a.reducers) {
			if err := p.write(&parts[r]); err != nil {
				return err
			}
		}
	case sortJob:
		b, err := parseBounds(*rawBounds, a.reducers)
		if err != nil {
			return err
		}
		err = a.src.split(a.split, a.splits, func(line []byte) error {
			lines++
			p := &parts[b.partition(line)]
			p.Write(line)
			p.WriteByte('\n')
			return nil
		})
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("map: unknown kind %q", a.kind)
	}
	dir := sandboxDir(env)
	var written int
	for r := range parts {
		written += parts[r].Len()
		if err := writeFileAtomic(filepath.Join(dir, partFile+strconv.Itoa(r)), parts[r].Bytes()); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "map %s split %d/%d: %d lines, %d bytes in %d partitions\n",
		a.kind, a.split, a.splits, lines, written, a.reducers)
	return nil
}

// mapOutput is where a finished map task's partition files are: the file
// server of its agent and its sandbox.
type mapOutput struct {
	Addr    string
	Sandbox string
}

func (m mapOutput) String() string { return m.Addr + "/" + m.Sandbox }

// outputList is a repeatable --from flag.
type outputList []mapOutput

func (l *outputList) String() string { return fmt.Sprint(*l) }

// Type names the flag's values in help.
func (l *outputList) Type() string { return "HOST:PORT/SANDBOX" }

func (l *outputList) Set(s string) error {
	addr, sandbox, ok := strings.Cut(s, "/")
	if !ok || addr == "" || sandbox == "" {
		return fmt.Errorf("%q: want HOST:PORT/SANDBOX", s)
	}
	*l = append(*l, mapOutput{Addr: addr, Sandbox: sandbox})
	return nil
}

// shuffleStats are what a reducer fetched.
type shuffleStats struct {
	// Agent is the reducer's agent's file server.
	Agent string `json:"agent"`
	// Partitions and Bytes count the partition files fetched; Remote
	// and RemoteBytes those fetched from other agents.
	Partitions  int   `json:"partitions"`
	Bytes       int64 `json:"bytes"`
	Remote      int   `json:"remote"`
	RemoteBytes int64 `json:"remote_bytes"`
}

// reduceArgs renders a reduce task's command line.
func reduceArgs(kind jobKind, partition, reducers, maps int, coflow string, from []mapOutput) []string {
	out := []string{"reduce", "--kind", string(kind), "--partition", strconv.Itoa(partition),
		"--reducers", strconv.Itoa(reducers), "--maps", strconv.Itoa(maps)}
	if coflow != "" {
		out = append(out, "--coflow", coflow)
	}
	for _, m := range from {
		out = append(out, "--from", m.String())
	}
	return out
}

// runReduce is `mapreduce reduce`: it fetches its partition from every
// map task's sandbox (the shuffle), merges them, and writes its output and
// shuffle statistics in its sandbox.
func runReduce(ctx context.Context, argv []string, env getenv, stdout io.Writer) error {
	fs := flag.NewFlagSet("reduce", flag.ContinueOnError)
	kind := fs.String("kind", string(wordCount), "wordcount or sort")
	partition := fs.Int("partition", 0, "the partition this task reduces")
	reducers := fs.Int("reducers", 1, "the number of reduce partitions")
	maps := fs.Int("maps", 0, "the number of map outputs to fetch")
	coflow := fs.String("coflow", "", "the shuffle's coflow, which the agents order fetches by")
	var from outputList
	fs.Var(&from, "from", "a map task's output, HOST:PORT/SANDBOX (repeated)")
	if err := fs.Parse(argv); err != nil {
		return err
	}
	if *partition < 0 || *partition >= *reducers {
		return fmt.Errorf("reduce: partition %d of %d", *partition, *reducers)
	}
	if len(from) != *maps {
		return fmt.Errorf("reduce: %d map outputs named, want %d", len(from), *maps)
	}
	token := env(envFilesToken)
	if token == "" {
		return fmt.Errorf("reduce: no %s: the agents need a files secret for the shuffle", envFilesToken)
	}
	files := newFileClient(token).inCoflow(*coflow, env(envAgentID))
	parts, stats, lost, err := fetchPartitions(ctx, files, from, *partition, env(envAgentHTTP))
	if err != nil {
		if len(lost) > 0 {
			rep := lostOutputs{Maps: lost}
			for _, i := range lost {
				rep.Sandboxes = append(rep.Sandboxes, from[i].Sandbox)
			}
			js, _ := json.Marshal(rep)
			if werr := writeFileAtomic(filepath.Join(sandboxDir(env), lostFile), js); werr != nil {
				err = errors.Join(err, werr)
			}
		}
		return err
	}
	var out bytes.Buffer
	switch jobKind(*kind) {
	case wordCount:
		c := counts{}
		for i, p := range parts {
			if err := c.read(bytes.NewReader(p)); err != nil {
				return fmt.Errorf("reduce: partition from %s: %w", from[i], err)
			}
		}
		for w := range c {
			if wordPartition(w, *reducers) != *partition {
				return fmt.Errorf("reduce: word %q belongs to partition %d, not %d", w, wordPartition(w, *reducers), *partition)
			}
		}
		if err := c.write(&out); err != nil {
			return err
		}
	case sortJob:
		var recs [][]byte
		for _, p := range parts {
			for len(p) > 0 {
				line, rest, _ := bytes.Cut(p, []byte{'\n'})
				recs, p = append(recs, line), rest
			}
		}
		slices.SortFunc(recs, bytes.Compare)
		for _, r := range recs {
			out.Write(r)
			out.WriteByte('\n')
		}
	default:
		return fmt.Errorf("reduce: unknown kind %q", *kind)
	}
	dir := sandboxDir(env)
	js, err := json.Marshal(stats)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, shuffleFile), js); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, outputFile), out.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reduce %s partition %d: %d partition files (%d from other agents), %d bytes in, %d bytes out\n",
		*kind, *partition, stats.Partitions, stats.Remote, stats.Bytes, out.Len())
	return nil
}

// fetchPartitions fetches partition part from every map output, a few at
// a time; own is the file server of the reducer's agent. When some fetches
// fail it returns, with the error, the indexes of the outputs that are
// gone as far as it can tell (not refused for the token, and not cut short
// by ctx).
func fetchPartitions(ctx context.Context, c *fileClient, from []mapOutput, part int, own string) ([][]byte, shuffleStats, []int, error) {
	stats := shuffleStats{Agent: own}
	parts := make([][]byte, len(from))
	errs := make([]error, len(from))
	sem := make(chan struct{}, fetchParallel)
	var wg sync.WaitGroup
	for i, m := range from {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			parts[i], errs[i] = c.get(ctx, m.Addr, m.Sandbox+"/"+partFile+strconv.Itoa(part))
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
		stats.Bytes += int64(len(parts[i]))
		if m.Addr != stats.Agent {
			stats.Remote++
			stats.RemoteBytes += int64(len(parts[i]))
		}
	}
	return parts, stats, nil, nil
}

// sandboxDir is where a worker writes its files: its sandbox, or the
// working directory when run by hand.
func sandboxDir(env getenv) string {
	if d := env(envSandbox); d != "" {
		return d
	}
	return "."
}

// writeFileAtomic writes data to path through a temporary file, so that
// readers never see part of it.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// workerTimeout bounds a worker's run.
const workerTimeout = 5 * time.Minute
