package main

import (
	"testing"

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
		HTTPAddr: "127.0.0.1:0", LogLevel: "info", NATSCA: "ca.pem", NATSCert: "c.pem", NATSKey: "k.pem"}
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.NATSURLs) != 2 || cfg.Resources.Scalar(protocol.ResCPUs) != 2000 || cfg.Attributes["rack"].Text != "r1" ||
		cfg.NATSCA != "ca.pem" || cfg.NATSCert != "c.pem" || cfg.NATSKey != "k.pem" {
		t.Errorf("got %+v", cfg)
	}
	for name, mutate := range map[string]func(*agentFlags){
		"no work dir":   func(f *agentFlags) { f.WorkDir = "" },
		"bad resources": func(f *agentFlags) { f.Resources = "cpus" },
		"bad isolation": func(f *agentFlags) { f.Isolation = "jail" },
		"bad attribute": func(f *agentFlags) { f.Attributes = "rack" },
		"cert no key":   func(f *agentFlags) { f.NATSKey = "" },
	} {
		g := f
		mutate(&g)
		if _, err := g.config(); err == nil {
			t.Errorf("%s: got nil error, want one", name)
		}
	}
}
