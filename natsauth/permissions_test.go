package natsauth

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// passwordLogin logs in with cfg's secret for the identity.
func passwordLogin(cfg Config) func(protocol.Identity) []nats.Option {
	return func(id protocol.Identity) []nats.Option {
		var secret string
		switch id.Kind {
		case protocol.KindMaster:
			secret = cfg.MasterSecret
		case protocol.KindFramework:
			secret = cfg.Frameworks[id.Name]
		case protocol.KindAgent:
			secret = cfg.Agents[id.Name]
		case protocol.KindOperator:
			secret = cfg.OperatorToken
		}
		return []nats.Option{nats.UserInfo(id.String(), secret)}
	}
}

func TestPermissionsEmbedded(t *testing.T) {
	cfg := testConfig()
	srv := startEmbedded(t, cfg, nil)
	runTable(t, srv.ClientURL(), passwordLogin(cfg))
}

func TestPermissionsInvalidIdentityMayDoNothing(t *testing.T) {
	for _, id := range []protocol.Identity{
		{Kind: "root", Name: "a"},
		{Kind: protocol.KindFramework, Name: ">"},
		{Kind: protocol.KindFramework, Name: "a.b"},
		{Kind: protocol.KindAgent},
	} {
		p := Permissions(testSubjects, id)
		if p.Response != nil || p.Publish == nil || p.Subscribe == nil ||
			len(p.Publish.Allow) != 0 || len(p.Subscribe.Allow) != 0 ||
			len(p.Publish.Deny) != 1 || p.Publish.Deny[0] != ">" ||
			len(p.Subscribe.Deny) != 1 || p.Subscribe.Deny[0] != ">" {
			t.Errorf("%+v: got %+v, want everything denied", id, p)
		}
	}
}
