package master

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// TestEmbeddedNATS_TLS: with TLS and client verification, the embedded
// servers refuse plain clients and clients without a certificate, serve
// clients with one, and route to each other over TLS.
func TestEmbeddedNATS_TLS(t *testing.T) {
	t.Parallel()
	log := testlog.New(t)
	files := testutil.NewTLSFiles(t)
	tlsConf := NATSTLS{Cert: files.Cert, Key: files.Key, CA: files.CA, VerifyClients: true}
	cfg := testNATSConfig()
	cfg.TLS = tlsConf
	first, err := startNATS(cfg, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.shutdown)
	cfg2 := testNATSConfig(first.RouteURL())
	cfg2.TLS = tlsConf
	second, err := startNATS(cfg2, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.shutdown)
	for name, opts := range map[string][]nats.Option{
		"plain":          nil,
		"no certificate": {nats.RootCAs(files.CA)},
	} {
		if nc, err := nats.Connect(first.ClientURL(), opts...); err == nil {
			nc.Close()
			t.Fatalf("a %s client connected", name)
		}
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := second.NumRoutes(); n < 1 {
			return fmt.Errorf("second server has %d routes, want 1", n)
		}
		return nil
	})
	sub, err := nats.Connect(first.ClientURL(), tlsConf.clientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pub, err := nats.Connect(second.ClientURL(), tlsConf.clientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	waitRouted(t, pub, sub)

	bad := testNATSConfig()
	bad.TLS = NATSTLS{CA: files.CA}
	if _, err := startNATS(bad, nil, log); err == nil {
		t.Fatal("an embedded server started with TLS but no certificate")
	}
}

// TestMaster_NATSTLS: a master whose embedded server wants client
// certificates leads (its own connection presents one naming it a
// master) and serves framework calls over TLS from a client whose
// certificate names its principal; a certificate naming no identity, and
// no password, gets nowhere.
func TestMaster_NATSTLS(t *testing.T) {
	t.Parallel()
	ca := testutil.NewTLSAuthority(t)
	cfg := httpTestConfig(t, raftstore.NewInmemNetwork(), "m1", nil, nil)
	cfg.HTTPAddr = ""
	cert, key := ca.IssueServer(t, "m1", protocol.Identity{Kind: protocol.KindMaster, Name: "m1"}.URI())
	cfg.NATS.TLS = NATSTLS{Cert: cert, Key: key, CA: ca.CA, VerifyClients: true}
	m := runHTTPTestMaster(t, cfg)
	httpTestWaitLeader(t, m)
	anon, anonKey := ca.IssueClient(t, "anon")
	if nc, err := nats.Connect(m.NATSURL(), nats.RootCAs(ca.CA), nats.ClientCert(anon, anonKey)); err == nil {
		nc.Close()
		t.Fatal("a certificate naming no identity connected without a password")
	}
	fwCert, fwKey := ca.IssueClient(t, "analytics", protocol.Identity{Kind: protocol.KindFramework, Name: "analytics"}.URI())
	nc, err := nats.Connect(m.NATSURL(), nats.RootCAs(ca.CA), nats.ClientCert(fwCert, fwKey),
		nats.CustomInboxPrefix(protocol.Subjects{}.Inbox(protocol.KindFramework, "analytics")))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var reply protocol.SubscribeReply
	if err := frameworkCall(t, nc, protocol.VerbSubscribe, nil, protocol.SubscribeRequest{Name: "f", Role: "eng", Principal: "analytics"}, &reply); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
}
