package natsauth

import (
	"errors"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// startMutualTLS starts an embedded server that verifies client
// certificates against ca's authority.
func startMutualTLS(t *testing.T, cfg Config, ca *testutil.TLSAuthority) *server.Server {
	t.Helper()
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: ca.Cert, KeyFile: ca.Key, CaFile: ca.CA, Verify: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return startEmbedded(t, cfg, func(o *server.Options) {
		o.TLS, o.TLSVerify, o.TLSConfig, o.TLSTimeout = true, true, tc, 5
	})
}

// certLogin is the options of a client presenting the certificate cert.
func certLogin(ca *testutil.TLSAuthority, cert, key string, extra ...nats.Option) []nats.Option {
	return append([]nats.Option{nats.ClientCert(cert, key), nats.RootCAs(ca.CA)}, extra...)
}

// expectUser fails unless the server registered c as user.
func expectUser(t *testing.T, srv *server.Server, c *client, user string) {
	t.Helper()
	connz, err := srv.Connz(&server.ConnzOptions{Username: true, CID: c.cid(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(connz.Conns) != 1 || connz.Conns[0].AuthorizedUser != user {
		t.Fatalf("%s: registered as %+v, want %s", c.name, connz.Conns, user)
	}
}

func TestCertificateIdentity(t *testing.T) {
	ca := testutil.NewTLSAuthority(t)
	cfg := testConfig()
	cfg.Certificates = true
	srv := startMutualTLS(t, cfg, ca)
	url := srv.ClientURL()
	p := testSubjects.Prefix

	mCert, mKey := ca.IssueClient(t, "master", masterM2.URI())
	observer := connect(t, "master by certificate", url, certLogin(ca, mCert, mKey)...)
	expectUser(t, srv, observer, masterM2.String())

	aCert, aKey := ca.IssueClient(t, "framework-a", frameworkA.URI())
	t.Run("the certificate's identity", func(t *testing.T) {
		fw := connect(t, "framework a by certificate", url, certLogin(ca, aCert, aKey)...)
		expectUser(t, srv, fw, frameworkA.String())
		runChecks(t, observer, fw, []check{
			subOK(p+".fw.a.>", p+".fw.a.fw-1.events"),
			pubOK(p + ".api.framework.a.fw-1.accept"),
			subDenied(p+".fw.b.>", p+".fw.b.fw-2.events"),
			subDenied(p+".fw.b.fw-2.events", ""),
			pubDenied(p + ".api.framework.b.fw-2.accept"),
		})
	})
	t.Run("the certificate outweighs a password", func(t *testing.T) {
		fw := connect(t, "framework a claiming b", url,
			certLogin(ca, aCert, aKey, nats.UserInfo("framework.b", "secret-b"))...)
		expectUser(t, srv, fw, frameworkA.String())
		runChecks(t, observer, fw, []check{subDenied(p+".fw.b.>", p+".fw.b.fw-2.events")})
	})

	plainCert, plainKey := ca.IssueClient(t, "no-identity")
	t.Run("a certificate naming no identity falls back to the password", func(t *testing.T) {
		fw := connect(t, "framework b by password", url,
			certLogin(ca, plainCert, plainKey, nats.UserInfo("framework.b", "secret-b"))...)
		expectUser(t, srv, fw, "framework.b")
		runChecks(t, observer, fw, []check{
			subOK(p+".fw.b.>", p+".fw.b.fw-2.events"),
			subDenied(p+".fw.a.>", p+".fw.a.fw-1.events"),
		})
	})

	twoCert, twoKey := ca.IssueClient(t, "two-identities", frameworkA.URI(), "allot:framework.b")
	otherCert, otherKey := ca.IssueClient(t, "other-uri", "spiffe://example.org/framework/a")
	for _, tc := range []struct {
		name      string
		cert, key string
		extra     []nats.Option
	}{
		{"no identity and no password", plainCert, plainKey, nil},
		{"no identity and a wrong password", plainCert, plainKey, []nats.Option{nats.UserInfo("framework.b", "secret-a")}},
		{"two identities", twoCert, twoKey, nil},
		{"a URI of another scheme", otherCert, otherKey, nil},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			c, err := dial(tc.name, url, certLogin(ca, tc.cert, tc.key, tc.extra...)...)
			if err == nil {
				c.nc.Close()
				t.Fatal("connected; want the connection refused")
			}
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Fatalf("got %v, want %v", err, nats.ErrAuthorization)
			}
		})
	}
}

// Without Certificates, a certificate is only TLS: the identity it names
// counts for nothing.
func TestCertificatesOff(t *testing.T) {
	ca := testutil.NewTLSAuthority(t)
	srv := startMutualTLS(t, testConfig(), ca)
	aCert, aKey := ca.IssueClient(t, "framework-a", frameworkA.URI())
	c, err := dial("framework a by certificate", srv.ClientURL(), certLogin(ca, aCert, aKey)...)
	if !errors.Is(err, nats.ErrAuthorization) {
		if err == nil {
			c.nc.Close()
		}
		t.Fatalf("got %v, want %v", err, nats.ErrAuthorization)
	}
	fw := connect(t, "framework a by password", srv.ClientURL(),
		certLogin(ca, aCert, aKey, nats.UserInfo("framework.a", "secret-a"))...)
	expectUser(t, srv, fw, protocol.Identity{Kind: protocol.KindFramework, Name: "a"}.String())
}
