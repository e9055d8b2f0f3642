package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMainCode_Usage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{name: "no command", code: 2, err: "usage"},
		{name: "unknown command", args: []string{"shuffle"}, code: 2, err: "unknown command"},
		{name: "help", args: []string{"help"}, code: 0},
		{name: "run without nats", args: []string{"run"}, code: 2, err: "--nats is required"},
		{name: "run help", args: []string{"run", "--help"}, code: 0, err: "-jobs"},
		{name: "run bad jobs", args: []string{"run", "--nats", "nats://x", "--jobs", "grep:1MB"}, code: 2, err: "kind"},
		{name: "run job without size", args: []string{"run", "--nats", "nats://x", "--jobs", "sort"}, code: 2, err: "no size"},
		{name: "run bad altruism", args: []string{"run", "--nats", "nats://x", "--altruism", "2"}, code: 2, err: "altruism"},
		{name: "map bad kind", args: []string{"map", "--kind", "grep", "--size", "10"}, code: 1, err: "unknown kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if code := mainCode(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.err) {
				t.Errorf("stderr %q, want it to mention %q", stderr.String(), tc.err)
			}
		})
	}
}

func TestParseRun(t *testing.T) {
	t.Parallel()
	cfg, err := parseRun([]string{"--nats", "nats://a, nats://b", "--size", "1MB", "--sort", "--reducers", "3", "--split-size", "256KB"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.nats) != 2 || len(cfg.jobs) != 1 {
		t.Fatalf("config %+v", cfg)
	}
	j := cfg.jobs[0]
	if j.Kind != sortJob || j.Size != 1<<20 || j.Role != roleAnalytics || j.Maps != 4 || j.Reducers != 3 {
		t.Errorf("job %+v", j)
	}
	if !filepath.IsAbs(cfg.workerPath) {
		t.Errorf("worker path %q is not absolute", cfg.workerPath)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), bytes.Repeat([]byte("word "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = parseRun([]string{"--nats", "nats://a", "--input", dir, "--jobs", "wordcount,sort@batch", "--split-size", "2500"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range cfg.jobs {
		if j.Size != 5000 || j.Maps != 2 {
			t.Errorf("job %+v: want the input's 5000 bytes in 2 maps", j)
		}
	}
	if cfg.jobs[1].Role != "batch" {
		t.Errorf("roles: %+v", cfg.jobs)
	}
}
