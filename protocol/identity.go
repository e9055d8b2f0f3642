package protocol

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// IdentityKind is what a NATS connection is: a master, an agent, a
// framework principal or an operator tool. Each kind has its own
// publish and subscribe permissions (docs/security.md).
type IdentityKind string

// Identity kinds.
const (
	KindMaster    IdentityKind = "master"
	KindAgent     IdentityKind = "agent"
	KindFramework IdentityKind = "framework"
	KindOperator  IdentityKind = "operator"
)

// Valid reports whether k is one of the identity kinds.
func (k IdentityKind) Valid() bool {
	switch k {
	case KindMaster, KindAgent, KindFramework, KindOperator:
		return true
	}
	return false
}

// MaxPrincipalLen bounds a principal's (or an agent credential's, or a
// master's) name.
const MaxPrincipalLen = 64

// AnonymousPrincipal stands in subjects for a framework or agent that
// names no principal. Only a cluster that authenticates nobody accepts
// it: where connections are authenticated, every client is someone.
const AnonymousPrincipal = "anonymous"

// NewIDToken stands in an API subject for the framework or agent ID of a
// call made before the caller has one: a new framework's subscribe, a new
// agent's register. Masters never generate it as an ID.
const NewIDToken = "new"

// ValidPrincipal reports whether name may name a principal, an agent
// credential or a master: 1 to MaxPrincipalLen ASCII letters, digits, '_'
// and '-'. Such a name is one NATS subject token, so it can stand in the
// subjects a connection is allowed to use.
func ValidPrincipal(name string) bool {
	if name == "" || len(name) > MaxPrincipalLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// PrincipalToken is the subject token of a principal: the principal
// itself, or AnonymousPrincipal for none.
func PrincipalToken(principal string) string {
	if principal == "" {
		return AnonymousPrincipal
	}
	return principal
}

// Identity is who a NATS connection is: its kind and its name (the
// principal, the agent's credential name, the master's node ID, the
// operator's name).
type Identity struct {
	Kind IdentityKind
	Name string
}

// identityURIScheme starts the URI a certificate carries its identity in
// (a URI subject alternative name): allot:framework.analytics.
const identityURIScheme = "allot:"

// String is the identity's NATS user name, e.g. "framework.analytics".
func (id Identity) String() string { return string(id.Kind) + "." + id.Name }

// URI is the identity as a certificate names it in a URI subject
// alternative name, e.g. "allot:framework.analytics".
func (id Identity) URI() string { return identityURIScheme + id.String() }

// Valid reports whether the kind is known and the name is a valid
// principal name.
func (id Identity) Valid() bool { return id.Kind.Valid() && ValidPrincipal(id.Name) }

// ParseIdentity reads an identity from a NATS user name
// ("framework.analytics") or a certificate's URI
// ("allot:framework.analytics").
func ParseIdentity(s string) (Identity, bool) {
	s = strings.TrimPrefix(s, identityURIScheme)
	kind, name, ok := strings.Cut(s, ".")
	id := Identity{Kind: IdentityKind(kind), Name: name}
	if !ok || !id.Valid() {
		return Identity{}, false
	}
	return id, true
}

// IdentityFromCert returns the identity a certificate names in its URI
// subject alternative names; false when it names none, or more than one.
func IdentityFromCert(cert *x509.Certificate) (Identity, bool) {
	var found Identity
	n := 0
	for _, u := range cert.URIs {
		if u == nil || !strings.HasPrefix(u.String(), identityURIScheme) {
			continue
		}
		id, ok := ParseIdentity(u.String())
		if !ok {
			return Identity{}, false
		}
		found, n = id, n+1
	}
	if n != 1 {
		return Identity{}, false
	}
	return found, true
}

// ReadCertIdentity reads a PEM certificate file and returns the identity
// it names (IdentityFromCert).
func ReadCertIdentity(path string) (Identity, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Identity{}, fmt.Errorf("client certificate: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return Identity{}, fmt.Errorf("client certificate %s: no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return Identity{}, fmt.Errorf("client certificate %s: %w", path, err)
	}
	id, ok := IdentityFromCert(cert)
	if !ok {
		return Identity{}, fmt.Errorf("%w: %s (a URI such as %s)", ErrNoCertIdentity,
			path, Identity{Kind: KindFramework, Name: "analytics"}.URI())
	}
	return id, nil
}

// ErrNoCertIdentity: a certificate names no identity, or more than one.
// Such a certificate may still serve for TLS, the identity then coming
// from a user name and password.
var ErrNoCertIdentity = errors.New("the certificate names no allot identity")

// CertPrincipal is the name of the identity of kind a client's PEM
// certificate names: "" when it names none (the certificate then serves
// for TLS only), an error when it names another kind. A client on a
// cluster that takes identities from certificates must use that name in
// its subjects.
func CertPrincipal(path string, kind IdentityKind) (string, error) {
	id, err := ReadCertIdentity(path)
	switch {
	case errors.Is(err, ErrNoCertIdentity):
		return "", nil
	case err != nil:
		return "", err
	case id.Kind != kind:
		return "", fmt.Errorf("client certificate %s names %s, not a %s", path, id, kind)
	}
	return id.Name, nil
}
