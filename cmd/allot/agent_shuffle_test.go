package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/executor"
)

func TestAgentFlags_ShuffleSlots(t *testing.T) {
	t.Parallel()
	cmd := agentCommand()
	fl := cmd.Flags().Lookup("shuffle-slots")
	if fl == nil || fl.DefValue != "2" {
		t.Fatalf("--shuffle-slots: got %+v, want a flag defaulting to 2", fl)
	}

	f := agentFlags{NATS: "nats://a:4222", SubjectPrefix: "allot", WorkDir: t.TempDir(), Isolation: "portable",
		HTTPAddr: "127.0.0.1:0", LogLevel: "info", ShuffleSlots: 5}
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ShuffleSlots != 5 {
		t.Fatalf("got shuffle slots %d, want 5", cfg.ShuffleSlots)
	}
	f.ShuffleSlots = -1
	if _, err := f.config(); err == nil {
		t.Fatal("negative shuffle slots: got nil error")
	}

	// The config file names it shuffle_slots; the command line wins.
	path := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(path, []byte(`{"shuffle_slots": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 7}, {[]string{"--shuffle-slots", "3"}, 3}} {
		var g agentFlags
		cmd := &cobra.Command{Use: "x"}
		cmd.Flags().IntVar(&g.ShuffleSlots, "shuffle-slots", executor.DefaultShuffleSlots, "")
		if err := cmd.Flags().Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := loadConfigFile(path, &g, cmd); err != nil {
			t.Fatal(err)
		}
		if g.ShuffleSlots != tc.want {
			t.Errorf("args %v: got %d shuffle slots, want %d", tc.args, g.ShuffleSlots, tc.want)
		}
	}
}
