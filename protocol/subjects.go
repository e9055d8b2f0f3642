package protocol

import (
	"strings"
)

// DefaultSubjectPrefix is the subject prefix used when Subjects.Prefix is empty.
const DefaultSubjectPrefix = "allot"

// FrameworkVerb is the last token of a framework → leader API subject.
type FrameworkVerb string

// Framework API verbs (subject allot.api.framework.<verb>).
const (
	VerbSubscribe      FrameworkVerb = "subscribe"
	VerbTeardown       FrameworkVerb = "teardown"
	VerbAccept         FrameworkVerb = "accept"
	VerbDecline        FrameworkVerb = "decline"
	VerbSuppress       FrameworkVerb = "suppress"
	VerbRevive         FrameworkVerb = "revive"
	VerbKill           FrameworkVerb = "kill"
	VerbReconcile      FrameworkVerb = "reconcile"
	VerbAcknowledge    FrameworkVerb = "acknowledge"
	VerbDemand         FrameworkVerb = "demand"
	VerbCoflowRegister FrameworkVerb = "coflow_register"
	// VerbStore may name no framework (the principal's store).
	VerbStore FrameworkVerb = "store"
)

// AgentVerb is the last token of an agent → leader API subject.
type AgentVerb string

// Agent API verbs (subject allot.api.agent.<verb>).
const (
	VerbRegister     AgentVerb = "register"
	VerbReregister   AgentVerb = "reregister"
	VerbHeartbeat    AgentVerb = "heartbeat"
	VerbStatus       AgentVerb = "status"
	VerbCoflowReport AgentVerb = "coflow_report"
)

// FrameworkVerbs returns every framework verb, in a stable order.
func FrameworkVerbs() []FrameworkVerb { return append([]FrameworkVerb(nil), frameworkVerbs...) }

// AgentVerbs returns every agent verb, in a stable order.
func AgentVerbs() []AgentVerb { return append([]AgentVerb(nil), agentVerbs...) }

// RequestType returns the message type a request on this verb must carry,
// or false for an unknown verb.
func (v FrameworkVerb) RequestType() (MsgType, bool) {
	t, ok := frameworkVerbTypes[v]
	return t, ok
}

// RequestType returns the message type a request on this verb must carry,
// or false for an unknown verb.
func (v AgentVerb) RequestType() (MsgType, bool) {
	t, ok := agentVerbTypes[v]
	return t, ok
}

// Subjects builds NATS subject names under a cluster prefix. The zero value
// uses DefaultSubjectPrefix. Methods have value receivers and are safe for
// concurrent use.
//
// Every subject a framework or agent uses names its principal, so that the
// NATS servers can let each connection use only its own (docs/security.md):
//
//	<prefix>.api.framework.<principal>.<framework id|new>.<verb>  framework → leader
//	<prefix>.api.agent.<principal>.<agent id|new>.<verb>          agent → leader
//	<prefix>.fw.<principal>.<framework id>.events                  leader → framework
//	<prefix>.agent.<principal>.<agent id>.cmd                      leader → agent
//	<prefix>.inbox.<kind>.<principal>.>                            replies to a client
//	<prefix>.leader, <prefix>.events                               masters → everyone, operators
type Subjects struct {
	// Prefix is one or more dot-separated tokens, e.g. "allot" or "allot.prod".
	Prefix string
}

func (s Subjects) prefix() string {
	if s.Prefix == "" {
		return DefaultSubjectPrefix
	}
	return s.Prefix
}

// Validate checks that the prefix is made of non-empty tokens without
// wildcards or whitespace.
func (s Subjects) Validate() error {
	for tok := range strings.SplitSeq(s.prefix(), ".") {
		if err := checkToken("subject prefix", tok); err != nil {
			return err
		}
	}
	return nil
}

// idToken is the subject token of a framework or agent ID: the ID, or
// NewIDToken for none yet.
func idToken(field, id string) (string, error) {
	if id == "" {
		return NewIDToken, nil
	}
	if err := checkToken(field, id); err != nil {
		return "", err
	}
	return id, nil
}

// principalToken checks a principal for a subject and returns its token.
func principalToken(principal string) (string, error) {
	tok := PrincipalToken(principal)
	if !ValidPrincipal(tok) {
		return "", Errorf(ErrInvalidArgument, "principal %q: want 1 to %d letters, digits, '_' or '-'",
			truncate(principal), MaxPrincipalLen)
	}
	return tok, nil
}

// APIFramework returns the subject of a framework call: the principal the
// framework acts as, the framework's ID (empty for a new framework's
// subscribe) and the verb, e.g. "allot.api.framework.analytics.fw-1.accept".
func (s Subjects) APIFramework(principal string, id FrameworkID, verb FrameworkVerb) (string, error) {
	p, err := principalToken(principal)
	if err != nil {
		return "", err
	}
	i, err := idToken("framework id", string(id))
	if err != nil {
		return "", err
	}
	return s.prefix() + ".api.framework." + p + "." + i + "." + string(verb), nil
}

// APIAgent returns the subject of an agent call: the agent's principal, its
// ID (empty to register) and the verb, e.g.
// "allot.api.agent.rack1.ag-1.heartbeat".
func (s Subjects) APIAgent(principal string, id AgentID, verb AgentVerb) (string, error) {
	p, err := principalToken(principal)
	if err != nil {
		return "", err
	}
	i, err := idToken("agent id", string(id))
	if err != nil {
		return "", err
	}
	return s.prefix() + ".api.agent." + p + "." + i + "." + string(verb), nil
}

// APIAll returns the wildcard subject only the leader subscribes to,
// e.g. "allot.api.>".
func (s Subjects) APIAll() string { return s.prefix() + ".api.>" }

// APIKind returns the wildcard subject of one kind of caller's API
// requests, e.g. "allot.api.agent.>".
func (s Subjects) APIKind(kind IdentityKind) string {
	return s.prefix() + ".api." + string(kind) + ".>"
}

// APIPrincipal is every API subject of one identity: what a framework
// principal or an agent credential may publish, e.g.
// "allot.api.framework.analytics.>".
func (s Subjects) APIPrincipal(kind IdentityKind, principal string) string {
	return s.prefix() + ".api." + string(kind) + "." + PrincipalToken(principal) + ".>"
}

// FrameworkEvents returns the subject the leader publishes a framework's
// events on, e.g. "allot.fw.analytics.fw-1.events".
func (s Subjects) FrameworkEvents(principal string, id FrameworkID) (string, error) {
	p, err := principalToken(principal)
	if err != nil {
		return "", err
	}
	if err := checkToken("framework id", string(id)); err != nil {
		return "", err
	}
	return s.prefix() + ".fw." + p + "." + string(id) + ".events", nil
}

// FrameworkEventsAll is every event subject of a principal's frameworks,
// e.g. "allot.fw.analytics.>".
func (s Subjects) FrameworkEventsAll(principal string) string {
	return s.prefix() + ".fw." + PrincipalToken(principal) + ".>"
}

// AgentCmd returns the subject the leader sends an agent's commands on,
// e.g. "allot.agent.rack1.ag-1.cmd".
func (s Subjects) AgentCmd(principal string, id AgentID) (string, error) {
	p, err := principalToken(principal)
	if err != nil {
		return "", err
	}
	if err := checkToken("agent id", string(id)); err != nil {
		return "", err
	}
	return s.prefix() + ".agent." + p + "." + string(id) + ".cmd", nil
}

// AgentCmdAll is every command subject of an agent credential's agents,
// e.g. "allot.agent.rack1.>".
func (s Subjects) AgentCmdAll(principal string) string {
	return s.prefix() + ".agent." + PrincipalToken(principal) + ".>"
}

// Inbox is the prefix of an identity's reply subjects (nats.go's
// CustomInboxPrefix), e.g. "allot.inbox.framework.analytics": replies to
// one principal's requests are readable by that principal only.
func (s Subjects) Inbox(kind IdentityKind, principal string) string {
	return s.prefix() + ".inbox." + string(kind) + "." + PrincipalToken(principal)
}

// Leader returns the subject of leader announcements, e.g. "allot.leader".
func (s Subjects) Leader() string { return s.prefix() + ".leader" }

// Events is the subject of cluster events (ClusterEvent), e.g. allot.events.
func (s Subjects) Events() string { return s.prefix() + ".events" }

// APISubject is an API subject taken apart.
type APISubject struct {
	// Kind is KindFramework or KindAgent.
	Kind IdentityKind
	// Principal is the principal token (AnonymousPrincipal for none).
	Principal string
	// ID is the framework or agent ID, or "" for NewIDToken.
	ID string
	// Verb is the call.
	Verb string
}

// RequestType returns the message type a request on this subject must
// carry.
func (a APISubject) RequestType() (MsgType, bool) {
	switch a.Kind {
	case KindFramework:
		return FrameworkVerb(a.Verb).RequestType()
	case KindAgent:
		return AgentVerb(a.Verb).RequestType()
	}
	return 0, false
}

// ParseAPI takes apart a subject received under APIAll. It returns false
// for any other subject, malformed principals and IDs, and unknown verbs.
func (s Subjects) ParseAPI(subject string) (APISubject, bool) {
	rest, found := strings.CutPrefix(subject, s.prefix()+".api.")
	if !found {
		return APISubject{}, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 4 {
		return APISubject{}, false
	}
	a := APISubject{Kind: IdentityKind(parts[0]), Principal: parts[1], ID: parts[2], Verb: parts[3]}
	if !ValidPrincipal(a.Principal) || !ValidID(a.ID) {
		return APISubject{}, false
	}
	if a.ID == NewIDToken {
		a.ID = ""
	}
	if _, ok := a.RequestType(); !ok {
		return APISubject{}, false
	}
	return a, true
}

// checkToken rejects strings that cannot be one NATS subject token: empty,
// or holding '.', '*', '>', whitespace or control characters.
func checkToken(field, tok string) error {
	if tok == "" {
		return Errorf(ErrInvalidArgument, "%s is empty", field)
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c == 0x7f || c == '.' || c == '*' || c == '>' {
			return Errorf(ErrInvalidArgument, "%s %q is not a subject token", field, truncate(tok))
		}
	}
	return nil
}
