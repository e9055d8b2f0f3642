package natsauth

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/url"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// fakeClient is a connection as an Authenticator sees it, for what a real
// server cannot be made to present.
type fakeClient struct {
	opts server.ClientOpts
	tls  *tls.ConnectionState
	user *server.User
}

func (f *fakeClient) GetOpts() *server.ClientOpts                 { return &f.opts }
func (f *fakeClient) GetTLSConnectionState() *tls.ConnectionState { return f.tls }
func (f *fakeClient) RegisterUser(u *server.User)                 { f.user = u }
func (f *fakeClient) RemoteAddress() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4222}
}
func (f *fakeClient) GetNonce() []byte { return nil }
func (f *fakeClient) Kind() int        { return server.CLIENT }
func (f *fakeClient) GetID() uint64    { return 1 }

// A certificate proves an identity only when the server verified its
// chain; a server that merely received one (no verified chains) gets
// the identity from the password instead.
func TestCheckTrustsOnlyVerifiedCertificates(t *testing.T) {
	cfg := testConfig()
	cfg.Certificates = true
	a, err := NewAuthenticator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cert := &x509.Certificate{URIs: []*url.URL{{Scheme: "allot", Opaque: "framework.a"}}}

	unverified := &fakeClient{tls: &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}}
	if a.Check(unverified) {
		t.Fatalf("admitted an unverified certificate as %+v", unverified.user)
	}
	unverified.opts = server.ClientOpts{Username: "framework.b", Password: "secret-b"}
	if !a.Check(unverified) || unverified.user.Username != "framework.b" {
		t.Fatalf("password with an unverified certificate: registered %+v, want framework.b", unverified.user)
	}

	verified := &fakeClient{tls: &tls.ConnectionState{
		PeerCertificates: []*x509.Certificate{cert},
		VerifiedChains:   [][]*x509.Certificate{{cert}},
	}}
	if !a.Check(verified) || verified.user.Username != "framework.a" {
		t.Fatalf("verified certificate: registered %+v, want framework.a", verified.user)
	}
	want := Permissions(testSubjects, frameworkA)
	if got := verified.user.Permissions; got == nil || got.Response == nil ||
		got.Publish.Allow[0] != want.Publish.Allow[0] {
		t.Fatalf("registered permissions %+v, want %+v", got, want)
	}
}
