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

var frameworkVerbTypes = map[FrameworkVerb]MsgType{
	VerbSubscribe:      MsgSubscribeRequest,
	VerbTeardown:       MsgTeardownRequest,
	VerbAccept:         MsgAcceptRequest,
	VerbDecline:        MsgDeclineRequest,
	VerbSuppress:       MsgSuppressRequest,
	VerbRevive:         MsgReviveRequest,
	VerbKill:           MsgKillRequest,
	VerbReconcile:      MsgReconcileRequest,
	VerbAcknowledge:    MsgAcknowledgeRequest,
	VerbDemand:         MsgDemandRequest,
	VerbCoflowRegister: MsgCoflowRegisterRequest,
}

var agentVerbTypes = map[AgentVerb]MsgType{
	VerbRegister:     MsgRegisterRequest,
	VerbReregister:   MsgReregisterRequest,
	VerbHeartbeat:    MsgHeartbeatRequest,
	VerbStatus:       MsgStatusUpdateRequest,
	VerbCoflowReport: MsgCoflowReportRequest,
}

// FrameworkVerbs returns every framework verb, in a stable order.
func FrameworkVerbs() []FrameworkVerb {
	return []FrameworkVerb{
		VerbSubscribe, VerbTeardown, VerbAccept, VerbDecline, VerbSuppress, VerbRevive,
		VerbKill, VerbReconcile, VerbAcknowledge, VerbDemand, VerbCoflowRegister,
	}
}

// AgentVerbs returns every agent verb, in a stable order.
func AgentVerbs() []AgentVerb {
	return []AgentVerb{VerbRegister, VerbReregister, VerbHeartbeat, VerbStatus, VerbCoflowReport}
}

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

// APIFramework returns the request subject for a framework verb,
// e.g. "allot.api.framework.accept".
func (s Subjects) APIFramework(verb FrameworkVerb) string {
	return s.prefix() + ".api.framework." + string(verb)
}

// APIAgent returns the request subject for an agent verb,
// e.g. "allot.api.agent.register".
func (s Subjects) APIAgent(verb AgentVerb) string {
	return s.prefix() + ".api.agent." + string(verb)
}

// APIAll returns the wildcard subject only the leader subscribes to,
// e.g. "allot.api.>".
func (s Subjects) APIAll() string { return s.prefix() + ".api.>" }

// FrameworkEvents returns the subject the leader publishes a framework's
// events on, e.g. "allot.fw.<id>.events".
func (s Subjects) FrameworkEvents(id FrameworkID) (string, error) {
	if err := checkToken("framework id", string(id)); err != nil {
		return "", err
	}
	return s.prefix() + ".fw." + string(id) + ".events", nil
}

// AgentCmd returns the subject the leader sends an agent's commands on,
// e.g. "allot.agent.<id>.cmd".
func (s Subjects) AgentCmd(id AgentID) (string, error) {
	if err := checkToken("agent id", string(id)); err != nil {
		return "", err
	}
	return s.prefix() + ".agent." + string(id) + ".cmd", nil
}

// Leader returns the subject of leader announcements, e.g. "allot.leader".
func (s Subjects) Leader() string { return s.prefix() + ".leader" }

// Events is the subject of cluster events (ClusterEvent), e.g. allot.events.
func (s Subjects) Events() string { return s.prefix() + ".events" }

// ParseAPI splits a subject received under APIAll into its kind
// ("framework" or "agent") and verb. It returns false for any other subject
// and for unknown verbs.
func (s Subjects) ParseAPI(subject string) (kind, verb string, ok bool) {
	rest, found := strings.CutPrefix(subject, s.prefix()+".api.")
	if !found {
		return "", "", false
	}
	kind, verb, found = strings.Cut(rest, ".")
	if !found {
		return "", "", false
	}
	switch kind {
	case "framework":
		_, ok = FrameworkVerb(verb).RequestType()
	case "agent":
		_, ok = AgentVerb(verb).RequestType()
	}
	if !ok {
		return "", "", false
	}
	return kind, verb, true
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
