package master

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Fencing of framework schedulers (protocol.SessionHeader): every event to
// a framework carries its current session, and a call that names another
// session is refused with ErrFailedOver, so a scheduler that another one
// took over can neither launch nor kill anything, and learns of the
// takeover from the first event it sees.

// frameworkMsg builds a message for a framework's event subject, stamped
// with the framework's session (none once the framework is gone).
func (l *leader) frameworkMsg(id protocol.FrameworkID, t protocol.MsgType, body any) (*nats.Msg, error) {
	f, known := l.view().Framework(id)
	var principal string
	if known {
		principal = f.Principal
	} else {
		// A removed framework is told why its calls now fail, on its
		// principal's subject still.
		principal, _ = l.principalOf(id)
	}
	subject, err := l.subj.FrameworkEvents(principal, id)
	if err != nil {
		return nil, err
	}
	data, err := protocol.Encode(t, body)
	if err != nil {
		return nil, err
	}
	msg := &nats.Msg{Subject: subject, Data: data}
	if known && f.Session != 0 {
		msg.Header = nats.Header{}
		msg.Header.Set(protocol.SessionHeader, protocol.FormatSession(f.Session))
	}
	return msg, nil
}

// publishFramework sends a framework an event.
func (l *leader) publishFramework(id protocol.FrameworkID, t protocol.MsgType, body any) {
	msg, err := l.frameworkMsg(id, t, body)
	if err != nil {
		l.logger.Error("framework event", "framework_id", id, "type", t.String(), "error", err)
		return
	}
	if err := l.nc.PublishMsg(msg); err != nil {
		l.logger.Warn("publish", "subject", msg.Subject, "error", err)
	}
}

// fence refuses a framework call whose session header names a session that
// is not the framework's. Calls without the header are let through, and so
// are subscribes (they carry their session in their body) and calls for
// frameworks the master does not know (their handlers say so).
func (l *leader) fence(msg *nats.Msg, c caller) error {
	if msg.Header == nil || c.fw == nil {
		return nil
	}
	session, ok := protocol.ParseSession(msg.Header.Get(protocol.SessionHeader))
	if !ok || c.fw.Session == session {
		return nil
	}
	return fmt.Errorf("%w: framework %s: session %d, another scheduler holds session %d",
		protocol.ErrFailedOver, c.fw.ID, session, c.fw.Session)
}
