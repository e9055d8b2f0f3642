package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// TestNATSConfig: `allot nats-config` writes a configuration nats-server
// reads, owner-only, with a user per master, principal and agent, each
// confined to its subjects; bad input is refused with the flag named.
func TestNATSConfig(t *testing.T) {
	t.Parallel()
	creds := writeTemp(t, `{"alice": "a-secret"}`)
	agents := writeTemp(t, `{"rack1": "r-secret"}`)
	out := filepath.Join(t.TempDir(), "nats.conf")
	stdout, stderr, code := runAllot(t, "", "nats-config", "--masters", "m1,m2", "--nats-master-secret", "ms",
		"--credentials", creds, "--agent-credentials", agents, "--out", out)
	if code != 0 || !strings.Contains(stdout, "4 users") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, mode %v, want 0600", err, fi.Mode())
	}
	opts, err := server.ProcessConfigFile(out)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]*server.User{}
	for _, u := range opts.Users {
		users[u.Username] = u
	}
	alice := users["framework.alice"]
	if len(users) != 4 || users["master.m1"] == nil || users["agent.rack1"] == nil || alice == nil {
		t.Fatalf("users %v, want masters m1 and m2, framework alice and agent rack1", users)
	}
	if got := alice.Permissions.Publish.Allow; len(got) != 1 || got[0] != "allot.api.framework.alice.>" {
		t.Fatalf("alice may publish %v", got)
	}
	for name, args := range map[string][]string{
		"--masters":     {"nats-config", "--nats-master-secret", "ms"},
		"--credentials": {"nats-config", "--masters", "m1", "--nats-master-secret", "ms", "--credentials", writeTemp(t, `{"a.b": "x"}`)},
	} {
		_, stderr, code := runAllot(t, "", args...)
		if code != 1 || !strings.Contains(stderr, strings.TrimPrefix(name, "--")) {
			t.Errorf("%s: exit %d, stderr %q, want a refusal naming it", name, code, stderr)
		}
	}
}

// TestNATSConfig_shippedExample: docs/examples/nats-server.conf is what
// `allot nats-config` writes for the example credentials it names, so the
// example stays true as the rules change.
func TestNATSConfig_shippedExample(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "nats-server.conf"))
	if err != nil {
		t.Fatal(err)
	}
	creds := writeTemp(t, `{"analytics": "ANALYTICS-SECRET", "ci": "CI-SECRET"}`)
	agents := writeTemp(t, `{"node-1": "NODE-1-SECRET", "node-2": "NODE-2-SECRET"}`)
	got, stderr, code := runAllot(t, "", "nats-config", "--masters", "m1,m2,m3", "--nats-master-secret", "MASTER-SECRET",
		"--credentials", creds, "--agent-credentials", agents, "--operator-token", "OPERATOR-TOKEN", "--listen", "0.0.0.0:4222")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got != string(want) {
		t.Fatalf("docs/examples/nats-server.conf differs from what allot nats-config writes now; regenerate it:\n%s", got)
	}
}
