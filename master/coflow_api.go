package master

import (
	"fmt"
	"time"

	"github.com/allot-project/allot/master/coflowbook"
	"github.com/allot-project/allot/protocol"
)

// coflowRegister registers, grows or withdraws a framework's coflow and
// sends the agents their new order. Every agent a flow names must be
// registered with the cluster.
func (l *leader) coflowRegister(r *protocol.CoflowRegisterRequest) error {
	if err := l.admit(r.FrameworkID); err != nil {
		return err
	}
	v := l.view()
	for i, f := range r.Flows {
		for _, a := range []protocol.AgentID{f.Src, f.Dst} {
			if _, ok := v.Agent(a); !ok {
				return fmt.Errorf("%w: flows[%d]: %s", protocol.ErrUnknownAgent, i, a)
			}
		}
	}
	now := time.Now()
	if err := l.coflows.Register(now, r); err != nil {
		return err
	}
	if r.Withdraw {
		l.logger.Debug("coflow withdrawn", "framework_id", r.FrameworkID, "coflow_id", r.CoflowID)
	} else {
		l.logger.Debug("coflow registered", "framework_id", r.FrameworkID, "coflow_id", r.CoflowID, "flows", len(r.Flows))
	}
	l.pushCoflows(now)
	return nil
}

// coflowReport applies an agent's report on the flows it sends.
func (l *leader) coflowReport(r *protocol.CoflowReportRequest) error {
	if _, ok := l.view().Agent(r.AgentID); !ok {
		return fmt.Errorf("%w: %s", protocol.ErrUnknownAgent, r.AgentID)
	}
	now := time.Now()
	if skipped := l.coflows.Report(now, r); skipped > 0 {
		l.logger.Debug("coflow report entries skipped", "agent_id", r.AgentID, "skipped", skipped, "entries", len(r.Flows))
	}
	l.pushCoflows(now)
	return nil
}

// pushCoflows sends every agent whose order changed its new priorities,
// and arms the timer for the coordinator's next slot change.
func (l *leader) pushCoflows(now time.Time) {
	pushes, next := l.coflows.Schedule(now)
	l.sendCoflowPriorities(pushes)
	if next.IsZero() {
		return
	}
	l.coflowTimerMu.Lock()
	defer l.coflowTimerMu.Unlock()
	if l.coflowTimer != nil {
		l.coflowTimer.Stop()
	}
	l.coflowTimer = time.AfterFunc(max(time.Until(next), 0), func() {
		select {
		case <-l.done:
		default:
			l.pushCoflows(time.Now())
		}
	})
}

func (l *leader) sendCoflowPriorities(pushes []coflowbook.Push) {
	for _, p := range pushes {
		l.sendAgent(p.Agent, protocol.MsgCoflowPrioritiesCommand, p.Cmd)
	}
}

// stopCoflowTimer stops the slot timer when leadership ends.
func (l *leader) stopCoflowTimer() {
	l.coflowTimerMu.Lock()
	defer l.coflowTimerMu.Unlock()
	if l.coflowTimer != nil {
		l.coflowTimer.Stop()
	}
}
