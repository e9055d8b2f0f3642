package natsauth

import (
	"github.com/nats-io/nats-server/v2/server"

	"github.com/allot-project/allot/protocol"
)

// everything is the subject wildcard matching every subject.
const everything = ">"

// Permissions is what identity id may publish and subscribe to under the
// subject scheme subj: the single table both the embedded servers and
// generated standalone configurations apply. Lists are allow lists, so
// anything not named is denied. An invalid identity may do nothing.
//
// Frameworks and agents publish only on their own API subjects, which is
// what lets the leader take the caller from the subject. They read their
// own events or commands, leader announcements and replies under their own
// inbox prefix, never another principal's. Operators only watch.
func Permissions(subj protocol.Subjects, id protocol.Identity) *server.Permissions {
	if !id.Valid() {
		return denyAll()
	}
	inbox := subj.Inbox(id.Kind, id.Name) + ".>"
	switch id.Kind {
	case protocol.KindMaster:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{everything}},
			Subscribe: &server.SubjectPermission{Allow: []string{everything}},
		}
	case protocol.KindFramework:
		return &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{subj.APIPrincipal(protocol.KindFramework, id.Name)}},
			Subscribe: &server.SubjectPermission{Allow: []string{
				subj.FrameworkEventsAll(id.Name), subj.Leader(), inbox,
			}},
			// The leader's heartbeat requests reach a framework on its
			// events subject with a reply subject of the leader's inbox,
			// which the framework may answer once.
			Response: &server.ResponsePermission{
				MaxMsgs: server.DEFAULT_ALLOW_RESPONSE_MAX_MSGS,
				Expires: server.DEFAULT_ALLOW_RESPONSE_EXPIRATION,
			},
		}
	case protocol.KindAgent:
		// Agents also ask each other's shuffle ingress for bytes and answer
		// those asks (docs/coflow.md): the subjects name the receiving
		// agent, not its principal, so any agent may reach any other's;
		// no framework or operator may.
		return &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{
				subj.APIPrincipal(protocol.KindAgent, id.Name), subj.ShuffleIngressAll(),
			}},
			Subscribe: &server.SubjectPermission{Allow: []string{
				subj.AgentCmdAll(id.Name), subj.Leader(), inbox, subj.ShuffleIngressAll(),
			}},
			Response: &server.ResponsePermission{
				MaxMsgs: server.DEFAULT_ALLOW_RESPONSE_MAX_MSGS,
				Expires: server.DEFAULT_ALLOW_RESPONSE_EXPIRATION,
			},
		}
	case protocol.KindOperator:
		return &server.Permissions{
			// A deny rather than an empty allow list: a configuration file
			// reads "allow: []" as no restriction at all.
			Publish:   &server.SubjectPermission{Deny: []string{everything}},
			Subscribe: &server.SubjectPermission{Allow: []string{subj.Events(), subj.Leader(), inbox}},
		}
	}
	return denyAll()
}

func denyAll() *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Deny: []string{everything}},
		Subscribe: &server.SubjectPermission{Deny: []string{everything}},
	}
}
