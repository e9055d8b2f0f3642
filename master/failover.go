package master

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/master/state"
	"github.com/allot-project/allot/protocol"
)

// checkFrameworks finds frameworks that went away and tears down those
// whose failover timeout ran out.
//
// A framework is connected while something listens on its event subject:
// the leader sends it a heartbeat as a request, and NATS answers "no
// responders" at once when nothing is subscribed there. (A framework may
// answer the heartbeat or not; a timeout counts as alive.) A disconnect is
// committed with its time, so the failover timer keeps running across
// leader changes; a framework that subscribes again is connected again.
func (l *leader) checkFrameworks(now time.Time) {
	v := l.view()
	var wg sync.WaitGroup
	for _, f := range v.Frameworks() {
		if !f.Connected {
			if time.Duration(now.UnixNano()-f.DisconnectedAt) >= f.FailoverTimeout {
				l.logger.Info("framework failover timeout expired", "framework_id", f.ID,
					"failover_timeout", f.FailoverTimeout)
				ctx, cancel := l.timed()
				if err := l.removeFramework(ctx, f.ID); err != nil {
					l.logger.Warn("could not remove framework", "framework_id", f.ID, "error", err)
				} else {
					// Should the scheduler be listening after all, it learns
					// why its requests now fail.
					l.publishFramework(f.ID, protocol.MsgErrorEvent, protocol.ErrorEvent{Error: *protocol.ToWire(
						fmt.Errorf("%w: framework %s removed: failover timeout %s expired",
							protocol.ErrUnknownFramework, f.ID, f.FailoverTimeout))})
				}
				cancel()
			}
			continue
		}
		l.mu.Lock()
		since, recent := l.subscribedAt[f.ID]
		l.mu.Unlock()
		if recent && now.Sub(since) < l.subscribeGrace() {
			// Just subscribed: it opens its event stream after the
			// subscribe reply.
			continue
		}
		wg.Add(1)
		go func(id protocol.FrameworkID) {
			defer wg.Done()
			if !l.listening(id) {
				l.disconnected(id, now)
			}
		}(f.ID)
	}
	wg.Wait()
}

// listening reports whether anything is subscribed to a framework's events.
func (l *leader) listening(id protocol.FrameworkID) bool {
	msg, err := l.frameworkMsg(id, protocol.MsgHeartbeatEvent, protocol.HeartbeatEvent{FilesToken: l.cfg.filesToken(id, time.Now())})
	if err != nil {
		return false
	}
	timeout := l.cfg.AgentHeartbeat / 4
	_, err = l.nc.RequestMsg(msg, timeout)
	return !errors.Is(err, nats.ErrNoResponders)
}

// disconnected records that a framework stopped listening and withdraws
// its offers; its tasks keep running until the failover timeout.
func (l *leader) disconnected(id protocol.FrameworkID, now time.Time) {
	ctx, cancel := l.timed()
	defer cancel()
	if _, err := l.apply(ctx, state.CmdSetFrameworkConnected, state.SetFrameworkConnected{
		FrameworkID: id, Connected: false, Time: now.UnixNano(),
	}); err != nil {
		l.logger.Warn("could not record a framework disconnect", "framework_id", id, "error", err)
		return
	}
	l.mu.Lock()
	err := l.alloc.Suppress(id)
	l.opening[id] = true // offers resume with its first request after it subscribes again
	l.mu.Unlock()
	if err != nil {
		l.logger.Warn("could not suppress a disconnected framework", "framework_id", id, "error", err)
	}
	l.logger.Info("framework disconnected", "framework_id", id)
	l.frameworkEvent(id, "disconnected")
}

// subscribeGrace is how long after subscribing a framework has to start
// listening on its event subject.
func (l *leader) subscribeGrace() time.Duration {
	return max(time.Second, 2*l.cfg.AgentHeartbeat)
}
