package natsauth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// logBuffer collects a logger's JSON lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// entries are the logged lines, decoded.
func (l *logBuffer) entries(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func newLogBuffer() (*logBuffer, hclog.Logger) {
	l := &logBuffer{}
	return l, hclog.New(&hclog.LoggerOptions{Output: l, Level: hclog.Debug, JSONFormat: true})
}

func TestAuthenticationRefusals(t *testing.T) {
	logs, logger := newLogBuffer()
	cfg := testConfig()
	cfg.Logger = logger
	url := startEmbedded(t, cfg, nil).ClientURL()
	const wrong = "not-the-secret-at-all"
	for _, tc := range []struct {
		name string
		opt  nats.Option
		// logged is part of the error the refusal must be logged with.
		logged string
	}{
		{"wrong password", nats.UserInfo("framework.a", wrong), "wrong password"},
		{"another principal's secret", nats.UserInfo("framework.a", "secret-b"), "wrong password"},
		{"an agent's secret as a framework", nats.UserInfo("framework.rack1", "secret-rack1"), "unknown user"},
		{"unknown principal", nats.UserInfo("framework.zzz", wrong), "unknown user"},
		{"unknown kind", nats.UserInfo("root.a", wrong), "user name is not"},
		{"no kind", nats.UserInfo("a", wrong), "user name is not"},
		{"empty password", nats.UserInfo("framework.a", ""), "no password"},
		{"master without the master secret", nats.UserInfo("master.m1", "secret-a"), "wrong password"},
		{"the shared token", nats.Token(wrong), "shared NATS token is no longer accepted"},
		{"the shared token, holding a real secret", nats.Token("master-secret"), "shared NATS token is no longer accepted"},
		{"no credential", nil, "no credential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []nats.Option
			if tc.opt != nil {
				opts = append(opts, tc.opt)
			}
			// The server logs a refusal before telling the client, so the
			// entry is there once dial returns.
			before := len(logs.entries(t))
			c, err := dial(tc.name, url, opts...)
			if err == nil {
				c.nc.Close()
				t.Fatal("connected; want the connection refused")
			}
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Fatalf("got %v, want %v", err, nats.ErrAuthorization)
			}
			entries := logs.entries(t)[before:]
			if len(entries) != 1 || entries[0]["@level"] != "warn" ||
				!strings.Contains(fmt.Sprint(entries[0]["error"]), tc.logged) {
				t.Fatalf("want one warning with an error saying %q, got %v", tc.logged, entries)
			}
		})
	}
	// Refusals name the claimed user and the address, and never a password.
	for _, e := range logs.entries(t) {
		for _, key := range []string{"user", "remote_addr", "error"} {
			if _, ok := e[key]; !ok {
				t.Errorf("refusal logged without %q: %v", key, e)
			}
		}
		if e["@module"] != "natsauth" {
			t.Errorf("logged by %v, want natsauth", e["@module"])
		}
	}
	for _, secret := range []string{wrong, "secret-b", "secret-a", "secret-rack1", "master-secret"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds the password %q:\n%s", secret, logs)
		}
	}
}

func TestAuthenticationAdmits(t *testing.T) {
	logs, logger := newLogBuffer()
	cfg := testConfig()
	cfg.Logger = logger
	srv := startEmbedded(t, cfg, nil)
	// Masters and operators are admitted under any name with their
	// kind's secret; frameworks and agents under their own name only.
	for _, login := range []struct{ user, secret string }{
		{"master.m1", "master-secret"},
		{"master.node-7", "master-secret"},
		{"operator.admin", "operator-token"},
		{"operator.alice", "operator-token"},
		{"framework.a", "secret-a"},
		{"agent.rack2", "secret-rack2"},
	} {
		c := connect(t, login.user, srv.ClientURL(), nats.UserInfo(login.user, login.secret))
		// The server knows the connection as its identity's user.
		connz, err := srv.Connz(&server.ConnzOptions{Username: true, CID: c.cid(t)})
		if err != nil {
			t.Fatal(err)
		}
		if len(connz.Conns) != 1 || connz.Conns[0].AuthorizedUser != login.user {
			t.Fatalf("%s: connection registered as %+v", login.user, connz.Conns)
		}
		if !strings.Contains(logs.String(), `"user":"`+login.user+`"`) {
			t.Errorf("%s: admission not logged:\n%s", login.user, logs)
		}
	}
	for _, e := range logs.entries(t) {
		if e["@level"] != "debug" {
			t.Errorf("logged %v, want only debug admissions", e)
		}
	}
}

func TestAuthenticationWithoutMasterOrOperatorSecret(t *testing.T) {
	cfg := testConfig()
	cfg.MasterSecret, cfg.OperatorToken = "", ""
	url := startEmbedded(t, cfg, nil).ClientURL()
	for _, login := range []struct{ user, secret string }{
		{"master.m1", ""}, {"master.m1", "master-secret"},
		{"operator.admin", ""}, {"operator.admin", "operator-token"},
	} {
		if c, err := dial(login.user, url, nats.UserInfo(login.user, login.secret)); !errors.Is(err, nats.ErrAuthorization) {
			if err == nil {
				c.nc.Close()
			}
			t.Errorf("%s with %q: got %v, want %v", login.user, login.secret, err, nats.ErrAuthorization)
		}
	}
	connect(t, "framework.a", url, nats.UserInfo("framework.a", "secret-a"))
}

// cid is the server's ID of c's connection.
func (c *client) cid(t *testing.T) uint64 {
	t.Helper()
	id, err := c.nc.GetClientID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}
