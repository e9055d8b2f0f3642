package devcluster

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/allot-project/allot/protocol"
)

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	ok := DefaultConfig()
	ok.DataDir = "/tmp/x"
	for _, tc := range []struct {
		name   string
		modify func(*Config)
		valid  bool
	}{
		{"defaults", func(*Config) {}, true},
		{"one master", func(c *Config) { c.Masters = 1 }, true},
		{"free ports", func(c *Config) { c.NATSPort, c.HTTPPort, c.RaftPort = 0, 0, 0 }, true},
		{"no data dir", func(c *Config) { c.DataDir = "" }, false},
		{"two masters", func(c *Config) { c.Masters = 2 }, false},
		{"no agents", func(c *Config) { c.Agents = 0 }, false},
		{"too many agents", func(c *Config) { c.Agents = MaxAgents + 1 }, false},
		{"negative port", func(c *Config) { c.NATSPort = -1 }, false},
		{"ports past 65535", func(c *Config) { c.HTTPPort = 65530 }, false},
		{"bad resources", func(c *Config) {
			c.AgentResources = protocol.Scalars(map[string]int64{protocol.ResCPUs: -1})
		}, false},
		{"bad isolation", func(c *Config) { c.Isolation = "vm" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.modify(&c)
			if err := c.Validate(); (err == nil) != tc.valid {
				t.Fatalf("got %v, want valid %v", err, tc.valid)
			}
			if err := c.Validate(); err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
		})
	}
}

func TestNewLayout(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Agents = 4
	l, err := newLayout(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.validate(); err != nil {
		t.Fatal(err)
	}
	if l.NATSAddr != "127.0.0.1:4222" || l.Masters[0].HTTPAddr != "127.0.0.1:5050" ||
		l.Masters[2].RaftAddr != "127.0.0.1:7002" || l.Agents[3].HTTPAddr != "127.0.0.1:5063" {
		t.Errorf("got addresses %+v, want the default ports", l)
	}
	pairs := map[string]bool{}
	var lastPort uint64
	for i, a := range l.Agents {
		if want := "dev-agent-" + strconv.Itoa(i+1); a.Hostname != want || a.Attributes["hostname"] != want {
			t.Errorf("agent %d: hostname %q (attribute %q), want %q", i, a.Hostname, a.Attributes["hostname"], want)
		}
		pair := a.Attributes["rack"] + "/" + a.Attributes["zone"]
		if pairs[pair] {
			t.Errorf("agent %d: rack/zone %s repeats", i, pair)
		}
		pairs[pair] = true
		ports := a.Resources.Ranges[protocol.ResPorts]
		if len(ports) != 1 || ports[0].Begin <= lastPort && i > 0 {
			t.Errorf("agent %d: ports %v overlap the previous agent's", i, ports)
		}
		lastPort = ports[0].End
		if a.Resources.Scalars[protocol.ResCPUs] <= 0 || a.Resources.Scalars[protocol.ResMem] <= 0 {
			t.Errorf("agent %d: resources %s, want a share of this machine", i, a.Resources)
		}
	}
	if err := l.save(cfg.DataDir); err != nil {
		t.Fatal(err)
	}
	back, found, err := LoadLayout(cfg.DataDir)
	if err != nil || !found || back.Agents[2].Attributes["zone"] != "z2" || back.Masters[1].ID != "m2" {
		t.Fatalf("LoadLayout: got %+v, %v, %v", back, found, err)
	}
}

func TestLoadLayout_errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, found, err := LoadLayout(dir); found || err != nil {
		t.Fatalf("empty dir: got found %v, %v", found, err)
	}
	for _, data := range []string{"{", `{"version": 9}`, `{"version": 1, "nats_addr": "x", "masters": [{"id": "m1"}]}`} {
		if err := os.WriteFile(filepath.Join(dir, layoutFile), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := LoadLayout(dir); !errors.Is(err, ErrLayout) {
			t.Errorf("%s: got %v, want ErrLayout", data, err)
		}
	}
}

func TestStart_portInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := testConfig(t, t.TempDir(), 1)
	cfg.NATSPort = ln.Addr().(*net.TCPAddr).Port
	if _, err := Start(context.Background(), cfg); !errors.Is(err, ErrPortInUse) {
		t.Fatalf("got %v, want ErrPortInUse", err)
	}
}

func TestStart_oneMaster(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir(), 1)
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.HTTPAddrs()) != 1 || c.LeaderHTTPAddr() != c.HTTPAddrs()[0] || len(c.AgentIDs()) != 2 {
		t.Errorf("got masters %v (leader %s), agents %v", c.HTTPAddrs(), c.LeaderHTTPAddr(), c.AgentIDs())
	}
	st, err := getState(c)
	if err != nil {
		t.Fatal(err)
	}
	racks := map[any]bool{}
	for _, a := range st.Agents {
		racks[a.Attributes["rack"]] = true
	}
	if len(st.Agents) != 2 || len(racks) != 2 {
		t.Errorf("got agents %+v, want two on different racks", st.Agents)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
