package testcluster

import (
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsauth"
	"github.com/allot-project/allot/protocol"
)

// maxAgentCredentials is how many agent credentials an authenticating
// cluster makes: one per agent, test agents and real ones together.
const maxAgentCredentials = 64

// identities are the credentials of an authenticating cluster (Options.
// Authenticate or Options.Credentials): the masters' secret, one credential
// per agent, and the framework principals of Options.Credentials.
type identities struct {
	masterSecret string
	agents       map[string]string
	nextAgent    int // guarded by Cluster.mu
}

func newIdentities() identities {
	ids := identities{masterSecret: protocol.NewID("master"), agents: map[string]string{}}
	for i := range maxAgentCredentials {
		ids.agents["agent-"+strconv.Itoa(i)] = protocol.NewID("agent")
	}
	return ids
}

// Authenticating reports whether the cluster's NATS server authenticates
// every connection and confines it to its identity's subjects.
func (c *Cluster) Authenticating() bool {
	return c.opts.Authenticate || len(c.opts.Credentials) > 0
}

// natsAuth is the cluster's NATS authentication, as a master's embedded
// server would run it.
func (c *Cluster) natsAuth() natsauth.Config {
	return natsauth.Config{
		Subjects:     c.subj,
		MasterSecret: c.ids.masterSecret,
		Frameworks:   c.opts.Credentials,
		Agents:       c.ids.agents,
		Certificates: c.opts.NATSTLS,
		Logger:       c.logger,
	}
}

// frameworkPrincipal is the principal a test framework acts as: the one
// asked for, or where the cluster authenticates the first credential.
func (c *Cluster) frameworkPrincipal(asked string) string {
	if asked != "" || !c.Authenticating() {
		return asked
	}
	names := make([]string, 0, len(c.opts.Credentials))
	for name := range c.opts.Credentials {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// NextAgentCredential hands out an agent credential of an authenticating
// cluster, a fresh one per call; empty strings when the cluster does not
// authenticate.
func (c *Cluster) NextAgentCredential() (principal, secret string) {
	c.t.Helper()
	if !c.Authenticating() {
		return "", ""
	}
	c.mu.Lock()
	n := c.ids.nextAgent
	c.ids.nextAgent++
	c.mu.Unlock()
	if n >= maxAgentCredentials {
		fatalf(c.t, "more than %d agents", maxAgentCredentials)
	}
	principal = "agent-" + strconv.Itoa(n)
	return principal, c.ids.agents[principal]
}

func (c *Cluster) nextAgentPrincipal() string {
	p, _ := c.NextAgentCredential()
	return p
}

// MasterSecret is the masters' secret of an authenticating cluster.
func (c *Cluster) MasterSecret() string { return c.ids.masterSecret }

// ClientOptions are the NATS options a client connecting as id needs: its
// credential where the cluster authenticates (a certificate naming id over
// mutual TLS, else its secret), TLS where the server speaks it, and the
// identity's own reply subjects.
func (c *Cluster) ClientOptions(id protocol.Identity) []nats.Option {
	c.t.Helper()
	opts := []nats.Option{nats.CustomInboxPrefix(c.subj.Inbox(id.Kind, id.Name))}
	if c.tls != nil {
		opts = append(opts, nats.RootCAs(c.tls.CA))
		cert, key := c.tls.Cert, c.tls.Key
		if c.Authenticating() {
			cert, key = c.identityCert(id)
		}
		opts = append(opts, nats.ClientCert(cert, key))
		return opts
	}
	if !c.Authenticating() {
		return opts
	}
	return append(opts, nats.UserInfo(id.String(), c.Secret(id)))
}

// ConnectAs returns a new NATS connection to the cluster as id, closed
// when the test ends.
func (c *Cluster) ConnectAs(id protocol.Identity) *nats.Conn {
	c.t.Helper()
	opts := append(c.ClientOptions(id), nats.Name(id.String()), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond))
	nc, err := nats.Connect(c.NATSURL(), opts...)
	if err != nil {
		fatalf(c.t, "connect to NATS as %s: %v", id, err)
	}
	c.mu.Lock()
	c.conns = append(c.conns, nc)
	c.mu.Unlock()
	return nc
}

// Connect returns a new NATS connection to the cluster with a master's
// rights (every subject), closed when the test ends: for tests that play
// several parts at once. Tests of what a tenant can do use ConnectAs.
func (c *Cluster) Connect(name string) *nats.Conn {
	c.t.Helper()
	if !protocol.ValidPrincipal(name) {
		name = "test"
	}
	return c.ConnectAs(protocol.Identity{Kind: protocol.KindMaster, Name: name})
}

// identityCert is a client certificate naming id, issued once per
// identity by the cluster's test authority (Options.NATSTLS).
func (c *Cluster) identityCert(id protocol.Identity) (cert, key string) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if files, ok := c.certs[id]; ok {
		return files[0], files[1]
	}
	cert, key = c.authority.IssueClient(c.t, string(id.Kind)+"-"+id.Name, id.URI())
	if c.certs == nil {
		c.certs = map[protocol.Identity][2]string{}
	}
	c.certs[id] = [2]string{cert, key}
	return cert, key
}

// IdentityTLS are the CA and the client certificate and key a client
// connecting as id presents, where the cluster's NATS speaks TLS; ok is
// false otherwise. Where the cluster authenticates, the certificate names
// id, else it is the one certificate every client shares.
func (c *Cluster) IdentityTLS(id protocol.Identity) (ca, cert, key string, ok bool) {
	c.t.Helper()
	if c.tls == nil {
		return "", "", "", false
	}
	if !c.Authenticating() {
		return c.tls.CA, c.tls.Cert, c.tls.Key, true
	}
	cert, key = c.identityCert(id)
	return c.tls.CA, cert, key, true
}

// Secret is the secret a client connecting as id presents where the
// cluster authenticates by password ("" otherwise).
func (c *Cluster) Secret(id protocol.Identity) string {
	if !c.Authenticating() || c.tls != nil {
		return ""
	}
	switch id.Kind {
	case protocol.KindMaster:
		return c.ids.masterSecret
	case protocol.KindFramework:
		return c.opts.Credentials[id.Name]
	case protocol.KindAgent:
		return c.ids.agents[id.Name]
	}
	return ""
}
