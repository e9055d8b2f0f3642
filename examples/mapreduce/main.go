// Mapreduce is an example framework for allot: word counts and sorts as
// MapReduce jobs, each a DAG (a map stage, a barrier, a reduce stage) run
// by framework/dag with Carbyne altruism. The framework and its worker
// are this one binary:
//
//	mapreduce run --nats URL[,URL...] [--jobs KIND:SIZE[@ROLE],...]
//	              [--input PATHS | --seed S --size BYTES] [--sort] [--split-size BYTES]
//	              [--output DIR] [--verify] [--json FILE] [--maps M] [--reducers R]
//	              [--role ROLE] [--altruism P] [--deadline D]
//	mapreduce gen --size BYTES --out DIR [--kind wordcount|sort] [--seed S]
//	mapreduce map ...     (a map task; the framework launches it)
//	mapreduce reduce ...  (a reduce task; the framework launches it)
//
// `run` runs several jobs at once, one framework (driver and DAG
// scheduler) per role. Each map task reads its split of the input (a
// corpus it generates from the job's seed, or files under --input), one
// per --split-size, and writes one sorted partition file per reducer in
// its sandbox, spilling sorted runs to disk and merging them whenever its
// buffer (a quarter of its memory) fills. Once every map task has
// finished, the reducers run: each downloads its partition from every map
// task's sandbox through the file server of the agent the map ran on (the
// shuffle, with the framework's files token that the agent passes to
// tasks), merges the sorted files and writes its output, into --output's
// directory (committed with _SUCCESS) or its sandbox. The framework
// prints each job's completion time, its stages' times and counters, its
// tasks on fair and on leftover offers and its shuffle; with --verify it
// checks the output against a single-process computation, streaming. It
// exits non-zero if a job failed or its output is wrong.
//
// The tasks run this binary at its absolute path on the agents, so on a
// cluster of several machines it must be installed at the same path on
// every agent (and --input and --output must name directories every agent
// sees at the same paths). The agents need a files secret shared with the
// masters, or the shuffle cannot read other agents' sandboxes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	flag "github.com/spf13/pflag"
)

const usage = `usage:
  mapreduce run --nats URL[,URL...] [--jobs KIND:SIZE[@ROLE],...] [--input PATHS | --seed S --size BYTES]
                [--sort] [--split-size BYTES] [--output DIR] [--verify] [--json FILE]
                [--maps M] [--reducers R] [--role ROLE] [--altruism P] [--deadline D]
  mapreduce gen --size BYTES --out DIR [--kind wordcount|sort] [--seed S]
  mapreduce map|reduce ...   (the tasks the framework launches)

Run 'mapreduce run --help' for every flag of run.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := mainCode(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// mainCode runs the command in args and returns the exit code: 0 on
// success, 2 for bad usage, 1 otherwise.
func mainCode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		var cfg runConfig
		if cfg, err = parseRun(args[1:], stderr); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			fmt.Fprintln(stderr, err)
			return 2
		}
		err = run(ctx, cfg, stdout, stderr)
	case "gen":
		err = runGen(args[1:], stdout)
	case "map":
		err = runMap(args[1:], os.Getenv, stdout)
	case "reduce":
		wctx, cancel := context.WithTimeout(ctx, workerTimeout)
		err = runReduce(wctx, args[1:], os.Getenv, stdout)
		cancel()
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mapreduce: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "mapreduce %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
