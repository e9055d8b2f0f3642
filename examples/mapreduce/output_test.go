package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dirNames lists dir's entries by name.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestPrepareOutput(t *testing.T) {
	t.Parallel()
	mkdir := func(t *testing.T, dir string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		rel  string // the directory, under a temporary one
		// setup makes what is at dir beforehand.
		setup   func(t *testing.T, dir string)
		wantErr string // a substring of the error; "" for none
	}{
		{name: "missing", rel: "out"},
		{name: "missing parent", rel: "a/b/out"},
		{name: "empty", rel: "out", setup: mkdir},
		{name: "not empty", rel: "out", wantErr: "already exists", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "part-r-00000"), "old\tresult\n")
		}},
		// Even a finished job's marker alone: the new job's _SUCCESS
		// would vouch for files it never wrote.
		{name: "only _SUCCESS", rel: "out", wantErr: "already exists", setup: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, successFile), "")
		}},
		{name: "a file", rel: "out", wantErr: "output", setup: func(t *testing.T, dir string) {
			writeFile(t, dir, "not a directory")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), filepath.FromSlash(tc.rel))
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			before, _ := os.ReadFile(filepath.Join(dir, "part-r-00000"))
			err := prepareOutput(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), dir) {
					t.Errorf("prepareOutput: %v, want an error naming %s with %q", err, dir, tc.wantErr)
				}
				// A refused directory is left as it was.
				if after, _ := os.ReadFile(filepath.Join(dir, "part-r-00000")); !bytes.Equal(after, before) {
					t.Errorf("prepareOutput changed a refused directory's file to %q", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Errorf("after prepareOutput: %v, %v: want a directory", fi, err)
			}
		})
	}
}

func TestCommitOutput(t *testing.T) {
	t.Parallel()
	const reducers = 3
	tests := []struct {
		name    string
		present []int // reducers whose part file is in place
		wantErr bool
	}{
		{name: "all present", present: []int{0, 1, 2}},
		{name: "one missing", present: []int{0, 2}, wantErr: true},
		{name: "none", present: nil, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, r := range tc.present {
				writeFile(t, filepath.Join(dir, outputName(r)), "w\t1\n")
			}
			// An attempt that lost the race to another left its half.
			writeFile(t, filepath.Join(dir, tempOutputDir, "attempt-2", outputName(1)), "half")
			err := commitOutput(dir, reducers)
			_, serr := os.Stat(filepath.Join(dir, successFile))
			if tc.wantErr {
				if err == nil {
					t.Errorf("commitOutput with reducers %v present: no error", tc.present)
				}
				if serr == nil {
					t.Errorf("an uncommitted job has %s", successFile)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := []string{successFile, "part-r-00000", "part-r-00001", "part-r-00002"}
			if got := dirNames(t, dir); !slices.Equal(got, want) {
				t.Errorf("committed output holds %q, want %q", got, want)
			}
			if data, err := os.ReadFile(filepath.Join(dir, successFile)); err != nil || len(data) != 0 {
				t.Errorf("%s: %q, %v: want an empty file", successFile, data, err)
			}
		})
	}
}

// TestReduce_OutputDir: reducers given an output directory leave their
// files in it, renamed out of their attempt directories, which they
// remove; the output is what they would leave in their sandboxes, and
// once committed it reads as another job's input without the markers.
func TestReduce_OutputDir(t *testing.T) {
	t.Parallel()
	spec := jobSpec{ID: "wc", Kind: wordCount, Maps: 2, Reducers: 3}
	src := source{kind: wordCount, seed: 21, size: 100 << 10}
	dir := filepath.Join(t.TempDir(), "out")
	if err := prepareOutput(dir); err != nil {
		t.Fatal(err)
	}
	res := runPipeline(t, spec, src, pipeline{output: dir})
	if got, want := dirNames(t, dir), []string{tempOutputDir, "part-r-00000", "part-r-00001", "part-r-00002"}; !slices.Equal(got, want) {
		t.Errorf("output holds %q, want %q", got, want)
	}
	if left := dirNames(t, filepath.Join(dir, tempOutputDir)); len(left) != 0 {
		t.Errorf("%s holds %q, want no attempt left", tempOutputDir, left)
	}
	if _, err := verifyWordCount(src, spec.Reducers, memOutputs(res.outputs)); err != nil {
		t.Error(err)
	}
	inSandboxes := runPipeline(t, spec, src, pipeline{})
	for r := range res.outputs {
		if !bytes.Equal(res.outputs[r], inSandboxes.outputs[r]) {
			t.Errorf("reducer %d: %d bytes in the output directory, %d in its sandbox", r, len(res.outputs[r]), len(inSandboxes.outputs[r]))
		}
	}

	if err := commitOutput(dir, spec.Reducers); err != nil {
		t.Fatal(err)
	}
	if got, want := dirNames(t, dir), []string{successFile, "part-r-00000", "part-r-00001", "part-r-00002"}; !slices.Equal(got, want) {
		t.Errorf("committed output holds %q, want %q", got, want)
	}
	files, err := listFiles([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f.path))
	}
	if want := []string{"part-r-00000", "part-r-00001", "part-r-00002"}; !slices.Equal(names, want) {
		t.Errorf("as input, the output lists %q, want %q", names, want)
	}
}
