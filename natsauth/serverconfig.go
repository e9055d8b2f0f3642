package natsauth

import (
	"bytes"
	"fmt"
	"io"
	"regexp"

	"golang.org/x/crypto/bcrypt"

	"github.com/allot-project/allot/protocol"
)

// DefaultOperator is the operator user a generated configuration names
// when ServerConfigOptions.Operators names none.
const DefaultOperator = "admin"

// bcryptMaxLen is the longest secret bcrypt hashes.
const bcryptMaxLen = 72

// bcryptLike is how nats-server tells a bcrypt hash from a password.
var bcryptLike = regexp.MustCompile(`^\$2[abxy]\$\d{2}\$`)

// ServerConfigOptions shape a standalone nats-server configuration.
type ServerConfigOptions struct {
	// Masters are the names the masters connect as (each its node ID):
	// a configuration file cannot say "any master.<name>" as the embedded
	// servers do, so each master needs its own entry.
	Masters []string
	// Operators are the operator users' names. Empty means DefaultOperator
	// alone when Config.OperatorToken is set, and no operator otherwise.
	Operators []string
	// Listen is the client listener, host:port; empty leaves nats-server's
	// default.
	Listen string
	// TLSCert, TLSKey and TLSCA, all three or none, make the server speak
	// TLS and admit clients by certificate alone (verify_and_map): each
	// user is named by its identity's certificate URI
	// (protocol.Identity.URI) and has no password.
	TLSCert, TLSKey, TLSCA string
	// Bcrypt writes bcrypt hashes of the secrets instead of the secrets.
	Bcrypt bool
	// BcryptCost is the hashes' cost; 0 means bcrypt.DefaultCost. The
	// server pays it on every connection.
	BcryptCost int
}

func (o ServerConfigOptions) tls() bool { return o.TLSCert != "" }

// configUser is one user entry of a generated configuration.
type configUser struct {
	id     protocol.Identity
	secret string
}

// WriteServerConfig writes a nats-server configuration that admits the
// identities cfg and opts name, each with its Permissions: for clusters
// whose NATS servers are not the masters' embedded ones. It writes
// nothing when it returns an error.
func WriteServerConfig(w io.Writer, cfg Config, opts ServerConfigOptions) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	users, err := configUsers(cfg, opts)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString(configHeader)
	if opts.Listen != "" {
		fmt.Fprintf(&b, "\nlisten: %s\n", confString(opts.Listen))
	}
	if opts.tls() {
		fmt.Fprintf(&b, "\ntls {\n  cert_file: %s\n  key_file: %s\n  ca_file: %s\n  verify_and_map: true\n}\n",
			confString(opts.TLSCert), confString(opts.TLSKey), confString(opts.TLSCA))
	}
	b.WriteString("\nauthorization {\n  users: [\n")
	for _, u := range users {
		if err := writeUser(&b, cfg.Subjects, u, opts); err != nil {
			return err
		}
	}
	b.WriteString("  ]\n}\n")
	_, err = w.Write(b.Bytes())
	return err
}

const configHeader = `# nats-server configuration for an allot cluster: who may connect, and what
# each connection may publish and subscribe. The rules are the ones the
# masters' embedded NATS servers apply; regenerate this file rather than
# edit it when credentials change, so the two stay the same.
#
# Run a server with it: nats-server -c <this file>. Add the cluster's
# routes (a cluster block) and other server settings around it, or include
# this file from the server's own configuration.
#
# It holds the credentials' secrets or their bcrypt hashes: keep it
# readable by the server only.
`

// configUsers lists the users of a configuration: masters, frameworks,
// agents, operators, each group in a stable order.
func configUsers(cfg Config, opts ServerConfigOptions) ([]configUser, error) {
	if (opts.TLSCert != "") != (opts.TLSKey != "") || (opts.TLSCert != "") != (opts.TLSCA != "") {
		return nil, fmt.Errorf("%w: TLSCert, TLSKey and TLSCA go together", ErrConfig)
	}
	if opts.BcryptCost != 0 && (opts.BcryptCost < bcrypt.MinCost || opts.BcryptCost > bcrypt.MaxCost) {
		return nil, fmt.Errorf("%w: bcrypt cost %d: want %d to %d", ErrConfig, opts.BcryptCost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	if len(opts.Masters) == 0 {
		return nil, fmt.Errorf("%w: no master names: no master could connect", ErrConfig)
	}
	if !opts.tls() {
		switch {
		case cfg.MasterSecret == "":
			return nil, fmt.Errorf("%w: masters named but no master secret for them", ErrConfig)
		case cfg.OperatorToken == "" && len(opts.Operators) > 0:
			return nil, fmt.Errorf("%w: operators named but no operator token for them", ErrConfig)
		}
	}
	var users []configUser
	seen := map[protocol.Identity]bool{}
	add := func(kind protocol.IdentityKind, name, secret string) error {
		id := protocol.Identity{Kind: kind, Name: name}
		if err := checkName(kind, name); err != nil {
			return err
		}
		if seen[id] {
			return fmt.Errorf("%w: %s named twice", ErrConfig, id)
		}
		if !opts.tls() {
			if err := checkStorable(id, secret, opts.Bcrypt); err != nil {
				return err
			}
		}
		seen[id] = true
		users = append(users, configUser{id: id, secret: secret})
		return nil
	}
	for _, name := range opts.Masters {
		if err := add(protocol.KindMaster, name, cfg.MasterSecret); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedNames(cfg.Frameworks) {
		if err := add(protocol.KindFramework, name, cfg.Frameworks[name]); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedNames(cfg.Agents) {
		if err := add(protocol.KindAgent, name, cfg.Agents[name]); err != nil {
			return nil, err
		}
	}
	operators := opts.Operators
	if len(operators) == 0 && cfg.OperatorToken != "" {
		operators = []string{DefaultOperator}
	}
	for _, name := range operators {
		if err := add(protocol.KindOperator, name, cfg.OperatorToken); err != nil {
			return nil, err
		}
	}
	return users, nil
}

// writeUser writes one user entry: named by certificate URI in TLS mode,
// else by user name and password.
func writeUser(b *bytes.Buffer, subj protocol.Subjects, u configUser, opts ServerConfigOptions) error {
	perms, err := confPermissions(Permissions(subj, u.id), "      ")
	if err != nil {
		return fmt.Errorf("%s: %w", u.id, err)
	}
	b.WriteString("    {\n")
	if opts.tls() {
		fmt.Fprintf(b, "      user: %s\n", confString(u.id.URI()))
	} else {
		password, err := configPassword(u, opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "      user: %s\n      password: %s\n", confString(u.id.String()), confString(password))
	}
	fmt.Fprintf(b, "      permissions: %s\n    }\n", perms)
	return nil
}

// checkStorable refuses a secret the file cannot hold as it is asked to,
// before any hashing: hashes are slow enough that a refusal should not
// wait for them.
func checkStorable(id protocol.Identity, secret string, hash bool) error {
	switch {
	case hash && len(secret) > bcryptMaxLen:
		return fmt.Errorf("%w: the secret of %s is %d bytes, more than bcrypt's %d",
			ErrConfig, id, len(secret), bcryptMaxLen)
	case !hash && bcryptLike.MatchString(secret):
		// nats-server takes a password starting like a bcrypt hash for
		// one, and would compare clients' secrets against it as a hash.
		return fmt.Errorf("%w: the secret of %s reads as a bcrypt hash to nats-server: write with Bcrypt",
			ErrConfig, id)
	}
	return nil
}

// configPassword is what the file stores for u's secret: the secret or
// its bcrypt hash.
func configPassword(u configUser, opts ServerConfigOptions) (string, error) {
	if !opts.Bcrypt {
		return u.secret, nil
	}
	cost := opts.BcryptCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(u.secret), cost)
	if err != nil {
		return "", fmt.Errorf("%w: hashing the secret of %s: %w", ErrConfig, u.id, err)
	}
	return string(h), nil
}
