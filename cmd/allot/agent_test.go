package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/protocol"
)

func TestParseResources(t *testing.T) {
	t.Parallel()
	r, err := parseResources("cpus=4000, mem=8192,ports=31000-31999+33000-33010")
	if err != nil {
		t.Fatal(err)
	}
	if r.Scalar(protocol.ResCPUs) != 4000 || r.Scalar(protocol.ResMem) != 8192 {
		t.Errorf("got scalars %v, want cpus 4000 mem 8192", r.Scalars)
	}
	if got := r.Ranges[protocol.ResPorts]; len(got) != 2 || got[0].Begin != 31000 || got[1].End != 33010 {
		t.Errorf("got ports %v, want 31000-31999 and 33000-33010", got)
	}
	for _, bad := range []string{"cpus", "cpus=x", "ports=1-x", "cpus=-5", "=3"} {
		if _, err := parseResources(bad); err == nil {
			t.Errorf("%q: got nil error, want one", bad)
		}
	}
}

func TestParseAttributes(t *testing.T) {
	t.Parallel()
	a, err := parseAttributes("rack=r1, cores=16,disks={ssd,nvme},zone=eu-1")
	if err != nil {
		t.Fatal(err)
	}
	if a["rack"].Kind != protocol.KindText || a["rack"].Text != "r1" || a["zone"].Text != "eu-1" {
		t.Errorf("got %v, want text rack r1 and zone eu-1", a)
	}
	if a["cores"].Kind != protocol.KindNumber || a["cores"].Number != 16 {
		t.Errorf("got cores %v, want number 16", a["cores"])
	}
	if a["disks"].Kind != protocol.KindSet || len(a["disks"].Set) != 2 {
		t.Errorf("got disks %v, want the set {ssd,nvme}", a["disks"])
	}
	if _, err := parseAttributes("rack"); err == nil {
		t.Error("rack without a value: got nil error")
	}
}

func TestAgentFlags_Config(t *testing.T) {
	t.Parallel()
	f := agentFlags{NATS: "nats://a:4222, nats://b:4222", SubjectPrefix: "allot", WorkDir: t.TempDir(),
		Hostname: "h1", Resources: "cpus=2000,mem=1024", Attributes: "rack=r1", Isolation: "portable",
		HTTPAddr: "127.0.0.1:0", LogLevel: "info", NATSCA: "ca.pem", NATSCert: "c.pem", NATSKey: "k.pem",
		GCDelay: time.Hour, GCInterval: time.Second, GCDiskThreshold: 0.8, GCDiskBudget: 10 << 30, ShuffleEgress: 100 << 20}
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.NATSURLs) != 2 || cfg.Resources.Scalar(protocol.ResCPUs) != 2000 || cfg.Attributes["rack"].Text != "r1" ||
		cfg.NATSCA != "ca.pem" || cfg.NATSCert != "c.pem" || cfg.NATSKey != "k.pem" || cfg.ShuffleEgress != 100<<20 {
		t.Errorf("got %+v", cfg)
	}
	if cfg.GCDelay != time.Hour || cfg.GCInterval != time.Second || cfg.GCDiskThreshold != 0.8 || cfg.GCDiskBudget != 10<<30 {
		t.Errorf("sandbox collector: got delay %s interval %s threshold %g budget %d", cfg.GCDelay, cfg.GCInterval,
			cfg.GCDiskThreshold, cfg.GCDiskBudget)
	}
	for name, mutate := range map[string]func(*agentFlags){
		"no work dir":   func(f *agentFlags) { f.WorkDir = "" },
		"bad resources": func(f *agentFlags) { f.Resources = "cpus" },
		"bad isolation": func(f *agentFlags) { f.Isolation = "jail" },
		"bad attribute": func(f *agentFlags) { f.Attributes = "rack" },
		"cert no key":   func(f *agentFlags) { f.NATSKey = "" },
		"threshold < 0": func(f *agentFlags) { f.GCDiskThreshold = -0.1 },
		"threshold 1.5": func(f *agentFlags) { f.GCDiskThreshold = 1.5 },
		"gc delay < 0":  func(f *agentFlags) { f.GCDelay = -time.Second },
		"interval < 0":  func(f *agentFlags) { f.GCInterval = -time.Second },
	} {
		g := f
		mutate(&g)
		if _, err := g.config(); err == nil {
			t.Errorf("%s: got nil error, want one", name)
		}
	}
}

// TestAgentFlags_GCConfigFile: the sandbox collector's keys in an agent
// config file, the budget as text or bytes, with flags winning.
func TestAgentFlags_GCConfigFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.json")
	conf := `{"gc_delay": 7200000000000, "gc_disk_threshold": 0.75, "gc_disk_budget": "20GB", "gc_interval": 30000000000}`
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var f agentFlags
	cmd := &cobra.Command{Use: "x"}
	cmd.Flags().DurationVar(&f.GCDelay, "gc-delay", 0, "")
	cmd.Flags().Float64Var(&f.GCDiskThreshold, "gc-disk-threshold", 0.9, "")
	cmd.Flags().Var(&f.GCDiskBudget, "gc-disk-budget", "")
	if err := cmd.Flags().Parse([]string{"--gc-disk-budget", "1.5GB"}); err != nil {
		t.Fatal(err)
	}
	if err := loadConfigFile(path, &f, cmd); err != nil {
		t.Fatal(err)
	}
	if f.GCDelay != 2*time.Hour || f.GCDiskThreshold != 0.75 || f.GCDiskBudget != 3<<29 || f.GCInterval != 30*time.Second {
		t.Errorf("got delay %s threshold %g budget %d interval %s, want 2h, 0.75, 1.5GB (the flag), 30s",
			f.GCDelay, f.GCDiskThreshold, f.GCDiskBudget, f.GCInterval)
	}
}
