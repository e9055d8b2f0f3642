package master

import (
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// sendAgent sends an agent a command on its command subject, which names
// the agent's principal (only that credential's agents may listen there),
// stamped with this leader's term so that the agent drops commands of a
// leader that was since replaced. Failures are logged: agents recover
// through resends and reregistration.
func (l *leader) sendAgent(id protocol.AgentID, t protocol.MsgType, body any) {
	principal := ""
	if a, ok := l.view().Agent(id); ok {
		principal = a.Principal
	}
	subject, err := l.subj.AgentCmd(principal, id)
	if err != nil {
		l.logger.Error("agent command subject", "agent_id", id, "error", err)
		return
	}
	data, err := protocol.Encode(t, body)
	if err != nil {
		l.logger.Error("encode message", "type", t.String(), "error", err)
		return
	}
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(protocol.TermHeader, strconv.FormatUint(l.term, 10))
	if err := l.nc.PublishMsg(msg); err != nil {
		l.logger.Warn("publish", "subject", subject, "error", err)
	}
}
