package master

import (
	"fmt"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// caller is who makes a call, as its subject says: the kind of client, the
// principal (authenticated by the NATS servers, which let a connection
// publish only on its own principal's subjects), and the framework or agent
// the call is for, which must be that principal's. It is resolved before
// the body is decoded.
type caller struct {
	kind protocol.IdentityKind
	// principal is the caller's principal as recorded ("" for a cluster
	// that authenticates nobody).
	principal string
	// id is the framework or agent ID the subject names ("" before the
	// caller has one: a new framework's subscribe, an agent's register).
	id string
	fw *state.Framework // framework calls naming a framework
}

// recordedPrincipal is the principal a subject's principal token stands
// for: "" for the anonymous token.
func recordedPrincipal(token string) string {
	if token == protocol.AnonymousPrincipal {
		return ""
	}
	return token
}

// identify resolves a call's caller from its subject: the framework or
// agent it names must exist and belong to the subject's principal; only a
// subscribe may name no framework, only a register no agent.
func (l *leader) identify(api protocol.APISubject) (caller, error) {
	c := caller{kind: api.Kind, principal: recordedPrincipal(api.Principal), id: api.ID}
	v := l.view()
	switch api.Kind {
	case protocol.KindFramework:
		if api.ID == "" {
			if v := protocol.FrameworkVerb(api.Verb); v != protocol.VerbSubscribe && v != protocol.VerbStore {
				return c, fmt.Errorf("%w: %s names no framework", protocol.ErrInvalidArgument, api.Verb)
			}
			return c, nil
		}
		f, ok := v.Framework(protocol.FrameworkID(api.ID))
		if !ok {
			return c, fmt.Errorf("%w: %s", protocol.ErrUnknownFramework, api.ID)
		}
		if f.Principal != c.principal {
			return c, fmt.Errorf("%w: framework %s is not principal %q's", protocol.ErrUnauthorized, api.ID, api.Principal)
		}
		c.fw = f
	case protocol.KindAgent:
		if api.ID == "" {
			if protocol.AgentVerb(api.Verb) != protocol.VerbRegister {
				return c, fmt.Errorf("%w: %s names no agent", protocol.ErrInvalidArgument, api.Verb)
			}
			return c, nil
		}
		if protocol.AgentVerb(api.Verb) == protocol.VerbRegister {
			return c, fmt.Errorf("%w: register names an agent ID", protocol.ErrInvalidArgument)
		}
		a, ok := v.Agent(protocol.AgentID(api.ID))
		if !ok {
			return c, fmt.Errorf("%w: %s", protocol.ErrUnknownAgent, api.ID)
		}
		if a.Principal != c.principal {
			return c, fmt.Errorf("%w: agent %s is not credential %q's", protocol.ErrUnauthorized, api.ID, api.Principal)
		}
	}
	return c, nil
}

// owns checks that a decoded body is about the caller's own framework or
// agent, the one its subject names, and that a subscribe names the
// subject's principal (or none, which stands for it).
func (c caller) owns(body any) error {
	switch r := body.(type) {
	case *protocol.SubscribeRequest:
		if string(r.FrameworkID) != c.id {
			return fmt.Errorf("%w: subscribe for framework %q on the subject of %q", protocol.ErrInvalidArgument,
				clipText(string(r.FrameworkID)), c.id)
		}
		if r.Principal == "" {
			r.Principal = c.principal
		}
		if r.Principal != c.principal {
			return fmt.Errorf("%w: subscribe as principal %q by principal %q", protocol.ErrUnauthorized,
				clipText(r.Principal), protocol.PrincipalToken(c.principal))
		}
		return nil
	case protocol.FrameworkCall:
		if string(r.ForFramework()) != c.id {
			return fmt.Errorf("%w: call for framework %q on the subject of %q", protocol.ErrInvalidArgument,
				clipText(string(r.ForFramework())), c.id)
		}
		return nil
	case protocol.AgentCall:
		if string(r.ForAgent()) != c.id {
			return fmt.Errorf("%w: call for agent %q on the subject of %q", protocol.ErrInvalidArgument,
				clipText(string(r.ForAgent())), c.id)
		}
		return nil
	}
	return fmt.Errorf("%w: %T", protocol.ErrUnknownType, body)
}
