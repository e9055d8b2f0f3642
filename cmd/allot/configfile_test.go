package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func TestLoadConfigFile_FlagsWin(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "conf.json")
	if err := os.WriteFile(path, []byte(`{"node_id": "from-file", "data_dir": "/data", "policy": "naive", "offer_timeout": 7000000000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var f masterFlags
	cmd := &cobra.Command{Use: "x"}
	cmd.Flags().StringVar(&f.NodeID, "node-id", "", "")
	cmd.Flags().StringVar(&f.DataDir, "data-dir", "", "")
	cmd.Flags().StringVar(&f.Policy, "policy", "dynamic", "")
	cmd.Flags().DurationVar(&f.OfferTimeout, "offer-timeout", time.Second, "")
	if err := cmd.Flags().Parse([]string{"--node-id", "from-flag", "--offer-timeout", "3s"}); err != nil {
		t.Fatal(err)
	}
	if err := loadConfigFile(path, &f, cmd); err != nil {
		t.Fatal(err)
	}
	if f.NodeID != "from-flag" || f.DataDir != "/data" || f.Policy != "naive" || f.OfferTimeout != 3*time.Second {
		t.Errorf("got node %q data %q policy %q offer timeout %v, want from-flag, /data, naive, 3s",
			f.NodeID, f.DataDir, f.Policy, f.OfferTimeout)
	}
}

func TestLoadConfigFile_Errors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`{"node_id": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var f masterFlags
	cmd := &cobra.Command{Use: "x"}
	if err := loadConfigFile(path, &f, cmd); err == nil {
		t.Error("bad JSON: got nil error")
	}
	if err := loadConfigFile(filepath.Join(t.TempDir(), "missing.json"), &f, cmd); err == nil {
		t.Error("missing file: got nil error")
	}
}
