package natsauth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/allot-project/allot/protocol"
)

// Why a connection was refused. Clients only ever see NATS's
// "Authorization Violation"; these are for the server's log.
var (
	errSharedToken  = errors.New("the shared NATS token is no longer accepted: connect with a credential (user name and secret, or a client certificate)")
	errUnsupported  = errors.New("nkeys and JWTs are not accepted: connect with a credential (user name and secret, or a client certificate)")
	errNoCredential = errors.New("no credential: connect with a user name and secret, or a client certificate")
	errBadUser      = errors.New("user name is not <kind>.<name> with kind master, agent, framework or operator")
	errUnknownUser  = errors.New("unknown user")
	errNoPassword   = errors.New("no password")
	errBadPassword  = errors.New("wrong password")
)

// Authenticator admits the connections a Config allows and confines each
// to its identity's Permissions. It implements server.Authentication for
// an embedded server's Options.CustomClientAuthentication.
type Authenticator struct {
	subjects     protocol.Subjects
	certificates bool
	master       *digest // nil: masters do not connect by password
	operator     *digest // nil: operators do not connect by password
	frameworks   map[string]digest
	agents       map[string]digest
	// decoy is compared against for users without a secret, so that a
	// refusal takes as long whether or not the user exists.
	decoy  digest
	logger hclog.Logger
}

var _ server.Authentication = (*Authenticator)(nil)

// digest is a secret's SHA-256: comparing fixed-length digests in constant
// time does not reveal a secret's length the way comparing secrets would.
type digest [sha256.Size]byte

// NewAuthenticator validates cfg and returns its authenticator. It keeps
// no reference to cfg's maps.
func NewAuthenticator(cfg Config) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Authenticator{
		subjects:     cfg.Subjects,
		certificates: cfg.Certificates,
		frameworks:   digests(cfg.Frameworks),
		agents:       digests(cfg.Agents),
		logger:       cfg.Logger,
	}
	if a.logger == nil {
		a.logger = hclog.NewNullLogger()
	}
	a.logger = a.logger.Named("natsauth")
	if _, err := rand.Read(a.decoy[:]); err != nil {
		return nil, fmt.Errorf("natsauth: decoy secret: %w", err)
	}
	if cfg.MasterSecret != "" {
		d := digest(sha256.Sum256([]byte(cfg.MasterSecret)))
		a.master = &d
	}
	if cfg.OperatorToken != "" {
		d := digest(sha256.Sum256([]byte(cfg.OperatorToken)))
		a.operator = &d
	}
	return a, nil
}

func digests(secrets map[string]string) map[string]digest {
	out := make(map[string]digest, len(secrets))
	for name, secret := range secrets {
		out[name] = sha256.Sum256([]byte(secret))
	}
	return out
}

// Check admits c when it proves an identity, and registers the identity's
// user name and permissions on it.
func (a *Authenticator) Check(c server.ClientAuthentication) bool {
	remote := ""
	if addr := c.RemoteAddress(); addr != nil {
		remote = addr.String()
	}
	id, method, err := a.identify(c)
	if err != nil {
		// The user name is the client's claim, worth logging to trace a
		// misconfigured client; the password never is.
		a.logger.Warn("NATS connection refused", "user", clip(c.GetOpts().Username),
			"remote_addr", remote, "error", err)
		return false
	}
	c.RegisterUser(&server.User{Username: id.String(), Permissions: Permissions(a.subjects, id)})
	a.logger.Debug("NATS connection authenticated", "user", id.String(), "method", method,
		"remote_addr", remote)
	return true
}

// identify returns who c proves to be and how: by certificate or by
// password.
func (a *Authenticator) identify(c server.ClientAuthentication) (protocol.Identity, string, error) {
	if a.certificates {
		if id, ok := certIdentity(c); ok {
			return id, "certificate", nil
		}
	}
	opts := c.GetOpts()
	switch {
	case opts.Token != "":
		return protocol.Identity{}, "", errSharedToken
	case opts.Nkey != "" || opts.JWT != "":
		return protocol.Identity{}, "", errUnsupported
	case opts.Username == "":
		return protocol.Identity{}, "", errNoCredential
	}
	id, err := a.checkPassword(opts.Username, opts.Password)
	return id, "password", err
}

// checkPassword returns the identity user names when password is its
// secret. Every path compares one digest, so the time taken does not tell
// a wrong password from an unknown user.
func (a *Authenticator) checkPassword(user, password string) (protocol.Identity, error) {
	got := sha256.Sum256([]byte(password))
	id, idOK := protocol.ParseIdentity(user)
	want, known := a.secret(id)
	match := subtle.ConstantTimeCompare(got[:], want[:]) == 1
	switch {
	case !idOK:
		return protocol.Identity{}, errBadUser
	case !known:
		return protocol.Identity{}, errUnknownUser
	case password == "":
		return protocol.Identity{}, errNoPassword
	case !match:
		return protocol.Identity{}, errBadPassword
	}
	return id, nil
}

// secret returns the digest of id's secret, or the decoy and false when id
// has none. No password matches the decoy: it is 32 random bytes, not
// the digest of anything known.
func (a *Authenticator) secret(id protocol.Identity) (digest, bool) {
	var d *digest
	switch id.Kind {
	case protocol.KindMaster:
		d = a.master
	case protocol.KindOperator:
		d = a.operator
	case protocol.KindFramework:
		if f, ok := a.frameworks[id.Name]; ok {
			d = &f
		}
	case protocol.KindAgent:
		if g, ok := a.agents[id.Name]; ok {
			d = &g
		}
	}
	if d == nil {
		return a.decoy, false
	}
	return *d, true
}

// certIdentity is the identity c's certificate names, when the server
// verified the certificate's chain: an unverified certificate proves
// nothing.
func certIdentity(c server.ClientAuthentication) (protocol.Identity, bool) {
	state := c.GetTLSConnectionState()
	if state == nil || len(state.PeerCertificates) == 0 || len(state.VerifiedChains) == 0 {
		return protocol.Identity{}, false
	}
	if state.PeerCertificates[0] == nil {
		return protocol.Identity{}, false
	}
	return protocol.IdentityFromCert(state.PeerCertificates[0])
}
