package natsauth

import (
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

// ErrConfig is returned for a configuration that cannot be used.
var ErrConfig = errors.New("natsauth: invalid config")

// MaxSecretLen bounds a secret: long enough for any generated secret,
// short enough that comparing one costs nothing.
const MaxSecretLen = 256

// Config is who may connect to a cluster's NATS servers.
type Config struct {
	// Subjects is the cluster's subject scheme: the permissions name its
	// prefix.
	Subjects protocol.Subjects
	// MasterSecret admits any user "master.<name>" presenting it: masters
	// are interchangeable, each connecting under its own node ID. Empty: no
	// master connects by password.
	MasterSecret string
	// Frameworks are the framework principals and their secrets; a
	// principal connects as user "framework.<principal>".
	Frameworks map[string]string
	// Agents are the agent credentials and their secrets; an agent
	// connects as user "agent.<name>".
	Agents map[string]string
	// OperatorToken admits any user "operator.<name>" presenting it.
	// Empty: no operator connects by password.
	OperatorToken string
	// Certificates makes a client certificate that names an identity
	// (protocol.IdentityFromCert) enough to be that identity. It is only
	// as strong as the server's verification of the chain, so it is
	// meant for servers that verify clients (mutual TLS); a certificate
	// whose chain the server did not verify is never trusted.
	Certificates bool
	// Logger receives refusals (Warn) and admissions (Debug).
	Logger hclog.Logger
}

// Enabled reports whether anything is configured to authenticate with:
// with nothing, a server should run without authentication.
func (c Config) Enabled() bool {
	return c.MasterSecret != "" || len(c.Frameworks) > 0 || len(c.Agents) > 0 ||
		c.OperatorToken != "" || c.Certificates
}

// Validate checks every name and secret, and that there is something to
// authenticate with.
func (c Config) Validate() error {
	if err := c.Subjects.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if !c.Enabled() {
		return fmt.Errorf("%w: no secret, credential or certificate to authenticate with", ErrConfig)
	}
	if c.MasterSecret != "" {
		if err := checkSecret("master secret", c.MasterSecret); err != nil {
			return err
		}
	}
	if c.OperatorToken != "" {
		if err := checkSecret("operator token", c.OperatorToken); err != nil {
			return err
		}
	}
	if err := checkCredentials(protocol.KindFramework, c.Frameworks); err != nil {
		return err
	}
	return checkCredentials(protocol.KindAgent, c.Agents)
}

// checkCredentials checks the names and secrets of one kind's credentials.
func checkCredentials(kind protocol.IdentityKind, creds map[string]string) error {
	for _, name := range sortedNames(creds) {
		if err := checkName(kind, name); err != nil {
			return err
		}
		if err := checkSecret(fmt.Sprintf("secret of %s.%s", kind, name), creds[name]); err != nil {
			return err
		}
	}
	return nil
}

// checkName rejects names that cannot be a subject token, and the
// anonymous principal: subjects use it for clients that name no
// principal, which an authenticating cluster has none of, so a credential
// by that name would blur the two.
func checkName(kind protocol.IdentityKind, name string) error {
	if !protocol.ValidPrincipal(name) {
		return fmt.Errorf("%w: %s name %q: want 1 to %d letters, digits, '_' or '-'",
			ErrConfig, kind, clip(name), protocol.MaxPrincipalLen)
	}
	if name == protocol.AnonymousPrincipal {
		return fmt.Errorf("%w: %s name %q is reserved for clients without a principal",
			ErrConfig, kind, name)
	}
	return nil
}

func checkSecret(what, secret string) error {
	if len(secret) == 0 || len(secret) > MaxSecretLen {
		return fmt.Errorf("%w: %s: want 1 to %d bytes, got %d", ErrConfig, what, MaxSecretLen, len(secret))
	}
	return nil
}

// sortedNames returns a map's keys in order, so that errors and generated
// configurations do not depend on map iteration.
func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// clip shortens a client- or user-supplied string for a message.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
