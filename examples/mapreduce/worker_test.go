package main

import (
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

// runPipeline runs a job's map and reduce tasks in this process against
// two fake agents (map i runs on agent i%2, reducers on agent 0) and
// returns the reducers' outputs and summed shuffle statistics.
func runPipeline(t *testing.T, spec jobSpec, src source) ([][]byte, shuffleStats) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
	var from []mapOutput
	for i := range spec.Maps {
		sandbox := "fw_" + spec.ID + ".map." + strconv.Itoa(i) + ".1"
		dir := filepath.Join(roots[i%2], sandbox)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := mapArgs{kind: spec.Kind, src: src, split: i, splits: spec.Maps, reducers: spec.Reducers, bounds: b}.args()
		if err := runMap(args[1:], env(map[string]string{envSandbox: dir}), io.Discard); err != nil {
			t.Fatalf("map %d: %v", i, err)
		}
		from = append(from, mapOutput{Addr: addrs[i%2], Sandbox: sandbox})
	}
	var outputs [][]byte
	var total shuffleStats
	for r := range spec.Reducers {
		dir := filepath.Join(roots[0], "fw_"+spec.ID+".reduce."+strconv.Itoa(r)+".1")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		args := reduceArgs(spec.Kind, r, spec.Reducers, spec.Maps, "", from)
		e := env(map[string]string{envSandbox: dir, envFilesToken: "tok", envAgentHTTP: addrs[0]})
		if err := runReduce(ctx, args[1:], e, io.Discard); err != nil {
			t.Fatalf("reduce %d: %v", r, err)
		}
		out, err := os.ReadFile(filepath.Join(dir, outputFile))
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, out)
		data, err := os.ReadFile(filepath.Join(dir, shuffleFile))
		var stats shuffleStats
		if err == nil {
			err = json.Unmarshal(data, &stats)
		}
		if err != nil || stats.Agent != addrs[0] {
			t.Fatalf("shuffle statistics %q: %v", data, err)
		}
		total.Partitions += stats.Partitions
		total.Remote += stats.Remote
	}
	return outputs, total
}

func TestPipeline_WordCount(t *testing.T) {
	t.Parallel()
	spec := jobSpec{ID: "wc", Kind: wordCount, Maps: 3, Reducers: 2}
	src := source{kind: wordCount, seed: 11, size: 200 << 10}
	outputs, stats := runPipeline(t, spec, src)
	verdict, err := verifyWordCount(src, outputs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(verdict, "word counts verified") {
		t.Errorf("verdict %q", verdict)
	}
	if stats.Partitions != 6 || stats.Remote != 2 {
		t.Errorf("reducers fetched %+v: want 6 partition files, 2 from the other agent", stats)
	}
	// A lost word is caught.
	outputs[0] = outputs[0][strings.IndexByte(string(outputs[0]), '\n')+1:]
	if _, err := verifyWordCount(src, outputs); err == nil {
		t.Errorf("an output line dropped: verified anyway")
	}
}

func TestPipeline_Sort(t *testing.T) {
	t.Parallel()
	for _, reducers := range []int{1, 3} {
		spec := jobSpec{ID: "sort", Kind: sortJob, Maps: 4, Reducers: reducers}
		src := source{kind: sortJob, seed: 12, size: 100 << 10}
		outputs, _ := runPipeline(t, spec, src)
		if _, err := verifySort(src, outputs); err != nil {
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
	args := reduceArgs(wordCount, 0, 1, 3, "", from)
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
