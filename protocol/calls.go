package protocol

// FrameworkCall is a framework → leader request: it is made for one
// framework, whose ID (with the caller's principal) makes its subject
// (Subjects.APIFramework). A new framework's subscribe names none.
type FrameworkCall interface {
	ForFramework() FrameworkID
}

// AgentCall is an agent → leader request: it is made for one agent, whose
// ID makes its subject (Subjects.APIAgent). A register names none.
type AgentCall interface {
	ForAgent() AgentID
}

// ForFramework implements FrameworkCall.
func (r SubscribeRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r TeardownRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r AcceptRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r DeclineRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r SuppressRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r ReviveRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r KillRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r ReconcileRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r AcknowledgeRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r DemandRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForFramework implements FrameworkCall.
func (r CoflowRegisterRequest) ForFramework() FrameworkID { return r.FrameworkID }

// ForAgent implements AgentCall.
func (r RegisterRequest) ForAgent() AgentID { return "" }

// ForAgent implements AgentCall.
func (r ReregisterRequest) ForAgent() AgentID { return r.AgentID }

// ForAgent implements AgentCall.
func (r HeartbeatRequest) ForAgent() AgentID { return r.AgentID }

// ForAgent implements AgentCall.
func (r StatusUpdateRequest) ForAgent() AgentID { return r.AgentID }

// ForAgent implements AgentCall.
func (r CoflowReportRequest) ForAgent() AgentID { return r.AgentID }

// RequestSubject is the subject a request is sent on by principal: the
// verb of the body's type, for the framework or agent the body names.
func (s Subjects) RequestSubject(principal string, body any) (string, error) {
	t, ok := TypeOf(body)
	if !ok {
		return "", Errorf(ErrUnknownType, "%T is not a message", body)
	}
	switch c := body.(type) {
	case FrameworkCall:
		return s.APIFramework(principal, c.ForFramework(), FrameworkVerb(verbOf[t]))
	case AgentCall:
		return s.APIAgent(principal, c.ForAgent(), AgentVerb(verbOf[t]))
	}
	return "", Errorf(ErrUnknownType, "%s is not a request", t)
}
