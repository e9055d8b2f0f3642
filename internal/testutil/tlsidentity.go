package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TLSAuthority is a test certificate authority that keeps its key, so a
// test can issue client certificates naming identities. Its TLSFiles are
// the CA and a server certificate for 127.0.0.1 and localhost, as
// NewTLSFiles makes.
type TLSAuthority struct {
	TLSFiles

	dir    string
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	mu     sync.Mutex
	serial int64
}

// NewTLSAuthority makes a CA and its server certificate in a temporary
// directory.
func NewTLSAuthority(t testing.TB) *TLSAuthority {
	t.Helper()
	a := &TLSAuthority{dir: t.TempDir(), serial: 1}
	a.key = newTestKey(t)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "allot test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &a.key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	if a.cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	a.CA = filepath.Join(a.dir, "ca.pem")
	writePEM(t, a.CA, "CERTIFICATE", der)
	a.Cert, a.Key = a.issue(t, "server", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "allot test"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	})
	return a
}

// IssueClient writes a client certificate and key, signed by the
// authority, with the given URI subject alternative names (e.g.
// "allot:framework.analytics"; none for a certificate naming no
// identity). name only tells the files apart.
func (a *TLSAuthority) IssueClient(t testing.TB, name string, uris ...string) (cert, key string) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("certificate URI %q: %v", s, err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	return a.issue(t, name, tmpl)
}

// IssueServer writes a certificate good for a server on 127.0.0.1 and
// localhost and for a client, naming the given URIs: a master's, which
// its embedded NATS server presents and its own connection too.
func (a *TLSAuthority) IssueServer(t testing.TB, name string, uris ...string) (cert, key string) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("certificate URI %q: %v", s, err)
		}
		tmpl.URIs = append(tmpl.URIs, u)
	}
	return a.issue(t, name, tmpl)
}

// issue signs tmpl, completed with a fresh key, serial and validity, and
// writes the certificate and key as <name>.pem and <name>-key.pem.
func (a *TLSAuthority) issue(t testing.TB, name string, tmpl *x509.Certificate) (cert, key string) {
	t.Helper()
	a.mu.Lock()
	a.serial++
	serial := a.serial
	a.mu.Unlock()
	k := newTestKey(t)
	now := time.Now()
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &k.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(a.dir, name+"-"+strconv.FormatInt(serial, 10))
	cert, key = base+".pem", base+"-key.pem"
	writePEM(t, cert, "CERTIFICATE", der)
	writePEM(t, key, "EC PRIVATE KEY", keyDER)
	return cert, key
}

func newTestKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
