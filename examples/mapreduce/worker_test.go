package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeFiles serves sandboxes under root like an agent's file server
// (download only), for one token; failFirst fails that many requests
// with 503 first.
type fakeFiles struct {
	root      string
	token     string
	failFirst atomic.Int32
}

func (f *fakeFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/files/download" {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	if f.failFirst.Add(-1) >= 0 {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	path := r.URL.Query().Get("path")
	if strings.Contains(path, "..") {
		http.Error(w, "escape", http.StatusForbidden)
		return
	}
	http.ServeFile(w, r, filepath.Join(f.root, filepath.FromSlash(path)))
}

// env is a worker's environment.
func env(kv map[string]string) getenv { return func(k string) string { return kv[k] } }

// pipeline is how runPipeline runs a job: each task's memory in MiB (0:
// unbounded), and the job's output directory (empty: the sandboxes).
type pipeline struct {
	memMiB int64
	output string
}

// pipelineResult is what a job run by runPipeline left: the reducers'
// outputs, and each stage's summed counters.
type pipelineResult struct {
	outputs       [][]byte
	maps, reduces taskCounters
}

// runPipeline runs a job's map and reduce tasks in this process against
// two fake agents (map i runs on agent i%2, reducers on agent 0).
func runPipeline(t *testing.T, spec jobSpec, src source, p pipeline) pipelineResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var b bounds
	if spec.Kind == sortJob {
		var err error
		if b, err = sampleBounds(src, spec.Reducers, src.seed); err != nil {
			t.Fatal(err)
		}
	}
	var addrs [2]string
	var roots [2]string
	for i := range addrs {
		roots[i] = t.TempDir()
		fs := &fakeFiles{root: roots[i], token: "tok"}
		fs.failFirst.Store(1)
		srv := httptest.NewServer(fs)
		t.Cleanup(srv.Close)
		addrs[i] = strings.TrimPrefix(srv.URL, "http://")
	}
	var res pipelineResult
	var from []mapOutput
	for i := range spec.Maps {
		sandbox := "fw_" + spec.ID + ".map." + strconv.Itoa(i) + ".1"
		dir := filepath.Join(roots[i%2], sandbox)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := mapArgs{kind: spec.Kind, src: src, split: i, splits: spec.Maps, reducers: spec.Reducers, bounds: b, memMiB: p.memMiB}.args()
		if err := runMap(args[1:], env(map[string]string{envSandbox: dir}), io.Discard); err != nil {
			t.Fatalf("map %d: %v", i, err)
		}
		res.maps.add(readCounters(t, dir))
		if _, err := os.Stat(filepath.Join(dir, spillDir)); !os.IsNotExist(err) {
			t.Errorf("map %d left its spills behind: %v", i, err)
		}
		from = append(from, mapOutput{Addr: addrs[i%2], Sandbox: sandbox})
	}
	for r := range spec.Reducers {
		dir := filepath.Join(roots[0], "fw_"+spec.ID+".reduce."+strconv.Itoa(r)+".1")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := reduceArgs{kind: spec.Kind, partition: r, reducers: spec.Reducers, maps: spec.Maps, from: from,
			memMiB: p.memMiB, output: p.output}.args()
		e := env(map[string]string{envSandbox: dir, envFilesToken: "tok", envAgentHTTP: addrs[0]})
		if err := runReduce(ctx, args[1:], e, io.Discard); err != nil {
			t.Fatalf("reduce %d: %v", r, err)
		}
		path := filepath.Join(dir, outputFile)
		if p.output != "" {
			path = filepath.Join(p.output, outputName(r))
		}
		out, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res.outputs = append(res.outputs, out)
		c := readCounters(t, dir)
		if c.Shuffle == nil || c.Shuffle.Agent != addrs[0] {
			t.Fatalf("reducer %d: shuffle statistics %+v", r, c.Shuffle)
		}
		if _, err := os.Stat(filepath.Join(dir, shuffleDir)); !os.IsNotExist(err) {
			t.Errorf("reducer %d left its fetched files behind: %v", r, err)
		}
		res.reduces.add(c)
	}
	return res
}

// readCounters reads the counters a task left in dir.
func readCounters(t *testing.T, dir string) taskCounters {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, countersFile))
	var c taskCounters
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil {
		t.Fatalf("counters in %s: %v", dir, err)
	}
	return c
}

// memOutputs reads outputs held in memory, reducer by reducer.
func memOutputs(outputs [][]byte) outputsReader {
	return func(r int, read func(io.Reader) error) error { return read(bytes.NewReader(outputs[r])) }
}

func TestPipeline_WordCount(t *testing.T) {
	t.Parallel()
	spec := jobSpec{ID: "wc", Kind: wordCount, Maps: 3, Reducers: 2}
	src := source{kind: wordCount, seed: 11, size: 200 << 10}
	res := runPipeline(t, spec, src, pipeline{})
	verdict, err := verifyWordCount(src, len(res.outputs), memOutputs(res.outputs))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(verdict, "word counts verified") {
		t.Errorf("verdict %q", verdict)
	}
	if sh := res.reduces.Shuffle; sh.Partitions != 6 || sh.Remote != 2 {
		t.Errorf("reducers fetched %+v: want 6 partition files, 2 from the other agent", sh)
	}
	if res.maps.Spills != 0 || res.maps.BytesIn < src.size || res.maps.RecordsOut != res.reduces.RecordsIn {
		t.Errorf("counters: maps %+v, reducers %+v: want no spill, the input's %d bytes (or a little more) in, the maps' records into the reducers",
			res.maps, res.reduces, src.size)
	}
	// A lost word is caught.
	res.outputs[0] = res.outputs[0][bytes.IndexByte(res.outputs[0], '\n')+1:]
	if _, err := verifyWordCount(src, len(res.outputs), memOutputs(res.outputs)); err == nil {
		t.Errorf("an output line dropped: verified anyway")
	}
}

func TestPipeline_Sort(t *testing.T) {
	t.Parallel()
	for _, reducers := range []int{1, 3} {
		spec := jobSpec{ID: "sort", Kind: sortJob, Maps: 4, Reducers: reducers}
		src := source{kind: sortJob, seed: 12, size: 100 << 10}
		res := runPipeline(t, spec, src, pipeline{})
		if _, err := verifySort(src, len(res.outputs), memOutputs(res.outputs)); err != nil {
			t.Errorf("%d reducers: %v", reducers, err)
		}
	}
}

func TestFileClient_Refusals(t *testing.T) {
	t.Parallel()
	fs := &fakeFiles{root: t.TempDir(), token: "tok"}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	c := newFileClient("wrong")
	c.backoff = time.Millisecond
	if _, err := c.get(ctx, addr, "x/y"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("wrong token: %v", err)
	}
	c = newFileClient("tok")
	c.backoff, c.attempts = time.Millisecond, 2
	if _, err := c.get(ctx, addr, "x/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing file: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(fs.root, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fs.root, "x", "y"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs.failFirst.Store(1)
	if data, err := c.get(ctx, addr, "x/y"); err != nil || string(data) != "data" {
		t.Errorf("after one failure: %q, %v", data, err)
	}
}

func TestReduce_BadArgs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := env(map[string]string{envFilesToken: "tok", envSandbox: t.TempDir()})
	for _, args := range [][]string{
		{"--partition", "2", "--reducers", "2"},
		{"--partition", "0", "--reducers", "1", "--maps", "2", "--from", "h:1/s"},
		{"--partition", "0", "--reducers", "1", "--maps", "1", "--from", "nosandbox"},
	} {
		if err := runReduce(ctx, args, e, io.Discard); err == nil {
			t.Errorf("reduce %q: no error", args)
		}
	}
	if err := runReduce(ctx, []string{"--maps", "0"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), envFilesToken) {
		t.Errorf("no token: %v", err)
	}
}

// TestReduce_LostOutputs: a reducer that cannot fetch a map's output (its
// agent is gone) fails and names that map in lost.json, and only that
// one.
func TestReduce_LostOutputs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root := t.TempDir()
	alive := httptest.NewServer(&fakeFiles{root: root, token: "tok"})
	t.Cleanup(alive.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	src := source{kind: wordCount, seed: 7, size: 192 << 10}
	var from []mapOutput
	for i, srv := range []*httptest.Server{alive, gone, alive} {
		sandbox := "fw_j.map." + strconv.Itoa(i) + ".1"
		dir := filepath.Join(root, sandbox)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := mapArgs{kind: wordCount, src: src, split: i, splits: 3, reducers: 1}.args()
		if err := runMap(args[1:], env(map[string]string{envSandbox: dir}), io.Discard); err != nil {
			t.Fatalf("map %d: %v", i, err)
		}
		from = append(from, mapOutput{Addr: strings.TrimPrefix(srv.URL, "http://"), Sandbox: sandbox})
	}
	dir := t.TempDir()
	args := reduceArgs{kind: wordCount, partition: 0, reducers: 1, maps: 3, from: from}.args()
	e := env(map[string]string{envSandbox: dir, envFilesToken: "tok", envAgentHTTP: from[0].Addr})
	if err := runReduce(ctx, args[1:], e, io.Discard); err == nil {
		t.Fatal("reduce succeeded without map 1's output")
	}
	data, err := os.ReadFile(filepath.Join(dir, lostFile))
	if err != nil {
		t.Fatal(err)
	}
	var lost lostOutputs
	if err := json.Unmarshal(data, &lost); err != nil || len(lost.Maps) != 1 || lost.Maps[0] != 1 ||
		len(lost.Sandboxes) != 1 || lost.Sandboxes[0] != from[1].Sandbox {
		t.Fatalf("lost.json %s (%v), want map 1 in %s only", data, err, from[1].Sandbox)
	}
	if _, err := os.Stat(filepath.Join(dir, outputFile)); !os.IsNotExist(err) {
		t.Fatalf("a failed reducer wrote output: %v", err)
	}
}
