package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	masterpkg "github.com/allot-project/allot/master"
)

func TestMasterFlags_Config(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	roles := filepath.Join(dir, "roles.json")
	if err := os.WriteFile(roles, []byte(`{"eng": 2, "eng/prod": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(dir, "credentials.json")
	if err := os.WriteFile(creds, []byte(`{"analytics": "s3cret", "ci": "other"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := masterFlags{
		NodeID: "m1", DataDir: dir, RaftBind: "127.0.0.1:7000",
		Peers:      "m1=127.0.0.1:7000, m2=127.0.0.2:7000,m3=127.0.0.3:7000",
		Bootstrap:  true,
		NATSListen: "127.0.0.1:4222", NATSCluster: "127.0.0.1:6222",
		NATSRoutes: "nats-route://127.0.0.2:6222,nats-route://127.0.0.3:6222",
		HTTPAddr:   "127.0.0.1:5050", RolesFile: roles, Policy: "dynamic", LeftoverOrder: "efficiency-first", CoflowScheduler: "aalo",
		AllocationInterval: 100e6, OfferTimeout: 30e9, LogLevel: "info", CredentialsFile: creds,
		NATSMasterSecret: "ms", AgentCredsFile: writeTemp(t, `{"rack1": "a-secret"}`), AgentsPerCredential: 2,
		AgentQPS: 10, AgentBurst: 20, RunAsACLsFile: writeTemp(t, `{"analytics": ["nobody"]}`), OperatorToken: "op", FrameworkQPS: 50, RoleACLsFile: writeTemp(t, `{"analytics": ["eng/*"]}`),
		NATSTLSCert: "c.pem", NATSTLSKey: "k.pem", NATSTLSCA: "ca.pem", NATSTLSVerify: true, AgentRemovalLimit: 0.3,
		AgentHeartbeat: 2e9, AgentTimeout: 30e9, MaxHeartbeatsPerSec: 500,
		StatusRetry: 20e9, Preemption: "fair", PreemptionInterval: 2e9, PreemptionDelay: 3e9, PreemptionDeadline: 60e9, PreemptionMax: 0.5,
	}
	cfg, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AgentHeartbeat != 2*time.Second || cfg.AgentTimeout != 30*time.Second || cfg.MaxHeartbeatsPerSecond != 500 {
		t.Errorf("agent heartbeat %v, timeout %v, heartbeats a second %v; want 2s, 30s, 500",
			cfg.AgentHeartbeat, cfg.AgentTimeout, cfg.MaxHeartbeatsPerSecond)
	}
	if len(cfg.Raft.Peers) != 3 || cfg.Raft.Peers[1].ID != "m2" || cfg.Raft.Peers[1].Address != "127.0.0.2:7000" {
		t.Errorf("peers: got %+v", cfg.Raft.Peers)
	}
	if cfg.NATS.Port != 4222 || cfg.NATS.ClusterPort != 6222 || len(cfg.NATS.Routes) != 2 {
		t.Errorf("nats: got %+v", cfg.NATS)
	}
	if cfg.Roles["eng/prod"] != 3 || cfg.Roles["eng"] != 2 {
		t.Errorf("roles: got %v", cfg.Roles)
	}
	if cfg.CoflowScheduler != "aalo" {
		t.Errorf("coflow scheduler: got %q, want aalo", cfg.CoflowScheduler)
	}
	if cfg.LeftoverOrder != "efficiency-first" {
		t.Errorf("leftover order: got %q, want efficiency-first", cfg.LeftoverOrder)
	}
	if got := cfg.RoleACLs["analytics"]; len(got) != 1 || got[0] != "eng/*" {
		t.Errorf("role ACLs: got %v", cfg.RoleACLs)
	}
	if got := cfg.FrameworkRateLimit; got.QPS != 50 || got.Burst != 50 {
		t.Errorf("framework rate limit: got %+v, want 50 qps, burst 50", got)
	}
	if want := (masterpkg.PreemptionConfig{Policy: "fair", Interval: 2e9, Delay: 3e9, Deadline: 60e9, MaxFraction: 0.5}); cfg.Preemption != want {
		t.Errorf("preemption: got %+v, want %+v", cfg.Preemption, want)
	}
	if cfg.OperatorToken != "op" {
		t.Errorf("operator token: got %q, want op", cfg.OperatorToken)
	}
	if got := cfg.NATS.TLS; got.Cert != "c.pem" || got.Key != "k.pem" || got.CA != "ca.pem" || !got.VerifyClients {
		t.Errorf("nats tls: got %+v", got)
	}
	if cfg.AgentRemovalLimit != 0.3 {
		t.Errorf("agent removal limit: got %v, want 0.3", cfg.AgentRemovalLimit)
	}
	if cfg.StatusRetryInterval != 20e9 {
		t.Errorf("status retry interval: got %s, want 20s", cfg.StatusRetryInterval)
	}
	if cfg.NATS.MasterSecret != "ms" {
		t.Errorf("nats master secret: got %q, want ms", cfg.NATS.MasterSecret)
	}
	if cfg.AgentCredentials["rack1"] != "a-secret" || cfg.MaxAgentsPerCredential != 2 {
		t.Errorf("agent credentials: got %d entries, %d per credential", len(cfg.AgentCredentials), cfg.MaxAgentsPerCredential)
	}
	if got := cfg.AgentRateLimit; got.QPS != 10 || got.Burst != 20 {
		t.Errorf("agent rate limit: got %+v, want 10 qps, burst 20", got)
	}
	if got := cfg.RunAsACLs["analytics"]; len(got) != 1 || got[0] != "nobody" {
		t.Errorf("run-as ACLs: got %v", cfg.RunAsACLs)
	}
	if len(cfg.Credentials) != 2 || cfg.Credentials["analytics"] != "s3cret" {
		t.Errorf("credentials: got %d entries", len(cfg.Credentials))
	}
}

// writeTemp writes content to a new file and returns its path.
func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMasterFlags_ConfigRejects(t *testing.T) {
	t.Parallel()
	base := masterFlags{NodeID: "m1", DataDir: t.TempDir(), RaftBind: "127.0.0.1:7000",
		NATSListen: "127.0.0.1:4222", NATSCluster: "127.0.0.1:6222", HTTPAddr: "",
		Policy: "dynamic", AllocationInterval: 100e6, LogLevel: "info"}
	for name, mutate := range map[string]func(*masterFlags){
		"no node id":           func(f *masterFlags) { f.NodeID = "" },
		"bad peer":             func(f *masterFlags) { f.Peers = "m1" },
		"negative gc percent":  func(f *masterFlags) { f.GCPercent = -1 },
		"bad listen":           func(f *masterFlags) { f.NATSListen = "nope" },
		"bad policy":           func(f *masterFlags) { f.Policy = "fifo" },
		"bad leftover":         func(f *masterFlags) { f.LeftoverOrder = "fifo" },
		"bad coflow scheduler": func(f *masterFlags) { f.CoflowScheduler = "lifo" },
		"missing file":         func(f *masterFlags) { f.RolesFile = "/nonexistent.json" },
		"bad role":             func(f *masterFlags) { f.Roles = map[string]float64{"eng": -1} },
		"no creds":             func(f *masterFlags) { f.CredentialsFile = writeTemp(t, `{}`) },
		"empty secret":         func(f *masterFlags) { f.CredentialsFile = writeTemp(t, `{"p": ""}`) },
		"bad creds":            func(f *masterFlags) { f.CredentialsFile = writeTemp(t, `["p"]`) },
		"bad acl":              func(f *masterFlags) { f.RoleACLsFile = writeTemp(t, `{"p": ["eng/**"]}`) },
		"bad qps":              func(f *masterFlags) { f.FrameworkQPS = -1 },
		"bad removal":          func(f *masterFlags) { f.AgentRemovalLimit = 1.5 },
		"negative retry":       func(f *masterFlags) { f.StatusRetry = -1 },
		"tls no key":           func(f *masterFlags) { f.NATSTLSCert = "c.pem" },
		"the old nats token":   func(f *masterFlags) { f.NATSToken = "tok" },
		"creds, no master secret": func(f *masterFlags) {
			f.CredentialsFile = writeTemp(t, `{"p": "s"}`)
		},
		"bad agent creds":   func(f *masterFlags) { f.AgentCredsFile = writeTemp(t, `{"a.b": "s"}`) },
		"bad run-as acls":   func(f *masterFlags) { f.RunAsACLsFile = writeTemp(t, `{"p": "nobody"}`) },
		"negative per cred": func(f *masterFlags) { f.AgentsPerCredential = -1 },
	} {
		f := base
		mutate(&f)
		if _, err := f.config(); err == nil {
			t.Errorf("%s: got nil error, want one", name)
		}
	}
}
