package natsauth

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// natsServer is the nats-server binary the standalone tests run, built
// once per test run from the version this module requires.
var natsServer struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if natsServer.dir != "" {
		os.RemoveAll(natsServer.dir)
	}
	if code == 0 {
		// Fails the tests if any left a goroutine running.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func natsServerBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build nats-server to test a generated configuration against")
	}
	natsServer.once.Do(func() {
		natsServer.dir, natsServer.err = os.MkdirTemp("", "natsauth-nats-server-")
		if natsServer.err != nil {
			return
		}
		natsServer.path = filepath.Join(natsServer.dir, "nats-server")
		cmd := exec.Command(goTool, "build", "-o", natsServer.path, "github.com/nats-io/nats-server/v2")
		if out, err := cmd.CombinedOutput(); err != nil {
			natsServer.err = fmt.Errorf("go build nats-server: %w\n%s", err, out)
		}
	})
	if natsServer.err != nil {
		t.Fatal(natsServer.err)
	}
	return natsServer.path
}

// startStandalone runs nats-server with cfg's generated configuration and
// returns its URL once a master can connect.
func startStandalone(t *testing.T, cfg Config, opts ServerConfigOptions, master []nats.Option) string {
	t.Helper()
	bin := natsServerBinary(t)
	port := testutil.FreePort(t)
	opts.Listen = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var conf bytes.Buffer
	if err := WriteServerConfig(&conf, cfg, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, conf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	output := &logBuffer{}
	cmd := exec.Command(bin, "-c", path)
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	url := "nats://" + opts.Listen
	err := testutil.Poll(20*time.Second, 50*time.Millisecond, func() error {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("nats-server exited: %v", err)
		default:
		}
		c, err := dial("readiness probe", url, master...)
		if err != nil {
			return err
		}
		c.nc.Close()
		return nil
	})
	if err != nil {
		t.Fatalf("standalone nats-server: %v\noutput:\n%s\nconfiguration:\n%s", err, output, conf.String())
	}
	return url
}

// expectRefused fails unless the server at url refuses the options.
func expectRefused(t *testing.T, url, what string, opts ...nats.Option) {
	t.Helper()
	c, err := dial(what, url, opts...)
	if err == nil {
		c.nc.Close()
		t.Fatalf("%s: connected; want the connection refused", what)
	}
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("%s: got %v, want %v", what, err, nats.ErrAuthorization)
	}
}

// standaloneConfig is testConfig with a framework whose secret tests the
// configuration's quoting end to end.
func standaloneConfig() Config {
	cfg := testConfig()
	cfg.Frameworks["awkward"] = awkwardSecret
	return cfg
}

func TestStandalonePasswords(t *testing.T) {
	cfg := standaloneConfig()
	masters := []string{masterM1.Name, masterM2.Name}
	login := passwordLogin(cfg)
	for _, mode := range []struct {
		name string
		opts ServerConfigOptions
	}{
		{"plain", ServerConfigOptions{Masters: masters}},
		// The cost only slows hashing; MinCost keeps the test quick.
		{"bcrypt", ServerConfigOptions{Masters: masters, Bcrypt: true, BcryptCost: bcrypt.MinCost}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			url := startStandalone(t, cfg, mode.opts, login(masterM1))
			runTable(t, url, login)
			connect(t, "framework.awkward", url, nats.UserInfo("framework.awkward", awkwardSecret))
			expectRefused(t, url, "wrong password", nats.UserInfo("framework.a", "secret-b"))
			expectRefused(t, url, "the shared token", nats.Token(cfg.MasterSecret))
			expectRefused(t, url, "an unlisted master", nats.UserInfo("master.m3", cfg.MasterSecret))
		})
	}
}

func TestStandaloneCertificates(t *testing.T) {
	ca := testutil.NewTLSAuthority(t)
	certs := map[protocol.Identity][2]string{}
	for _, id := range []protocol.Identity{masterM1, masterM2, frameworkA, agentRack1, operatorAd} {
		cert, key := ca.IssueClient(t, id.String(), id.URI())
		certs[id] = [2]string{cert, key}
	}
	login := func(id protocol.Identity) []nats.Option {
		return certLogin(ca, certs[id][0], certs[id][1])
	}
	cfg := testConfig()
	cfg.Certificates = true
	url := startStandalone(t, cfg, ServerConfigOptions{
		Masters: []string{masterM1.Name, masterM2.Name},
		TLSCert: ca.Cert, TLSKey: ca.Key, TLSCA: ca.CA,
	}, login(masterM1))
	runTable(t, url, login)

	// Certificates alone admit: a password does not.
	plainCert, plainKey := ca.IssueClient(t, "no-identity")
	expectRefused(t, url, "a password with a certificate naming no identity",
		certLogin(ca, plainCert, plainKey, nats.UserInfo("framework.a", "secret-a"))...)
}
