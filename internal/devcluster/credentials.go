package devcluster

import (
	"github.com/allot-project/allot/natsauth"
	"github.com/allot-project/allot/protocol"
)

// DevPrincipal is the framework principal a dev cluster makes for its
// user: the examples connect as it ($ALLOT_PRINCIPAL, $ALLOT_SECRET).
const DevPrincipal = "dev"

// Credentials are a dev cluster's identities, made on its first start and
// kept in dev.json (readable by its owner only): a dev cluster runs with
// tenant isolation on, as a production one does (docs/security.md).
type Credentials struct {
	// MasterSecret is the masters' NATS secret.
	MasterSecret string `json:"master_secret"`
	// Frameworks are the framework principals and their secrets.
	Frameworks map[string]string `json:"frameworks"`
	// Agents are the agents' credentials, one per agent, by agent name.
	Agents map[string]string `json:"agents"`
	// OperatorToken guards the operator API's actions and full views.
	OperatorToken string `json:"operator_token"`
}

// newCredentials makes fresh credentials for the agents named.
func newCredentials(agents []AgentLayout) Credentials {
	c := Credentials{
		MasterSecret:  protocol.NewID("master"),
		Frameworks:    map[string]string{DevPrincipal: protocol.NewID("secret")},
		Agents:        map[string]string{},
		OperatorToken: protocol.NewID("operator"),
	}
	for _, a := range agents {
		c.Agents[a.Name] = protocol.NewID("agent")
	}
	return c
}

// complete reports whether c holds a credential for everything of l.
func (c Credentials) complete(l Layout) bool {
	if c.MasterSecret == "" || c.OperatorToken == "" || c.Frameworks[DevPrincipal] == "" {
		return false
	}
	for _, a := range l.Agents {
		if c.Agents[a.Name] == "" {
			return false
		}
	}
	return true
}

// natsAuth is the NATS server's authentication for these credentials.
func (c Credentials) natsAuth(subj protocol.Subjects) natsauth.Config {
	return natsauth.Config{
		Subjects: subj, MasterSecret: c.MasterSecret, Frameworks: c.Frameworks,
		Agents: c.Agents, OperatorToken: c.OperatorToken,
	}
}

// Credentials returns the cluster's identities.
func (c *Cluster) Credentials() Credentials { return c.layout.Credentials }

// FrameworkSecret is the secret of the dev principal (DevPrincipal).
func (c *Cluster) FrameworkSecret() string { return c.layout.Credentials.Frameworks[DevPrincipal] }
