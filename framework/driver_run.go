package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Run connects, subscribes the framework and delivers events to the
// scheduler until ctx ends or the framework is torn down; it then returns
// nil. It returns an error when the framework cannot go on: the master no
// longer knows it (protocol.ErrUnknownFramework, after its failover
// timeout), it was refused at subscribe (protocol.ErrUnauthorized, ...),
// or the NATS connection was closed. A driver runs once; calling Run again
// returns ErrClosed.
func (d *Driver) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.started {
		d.mu.Unlock()
		return ErrClosed
	}
	d.started = true
	d.mu.Unlock()

	nc, owned, err := d.connect()
	if err != nil {
		d.finish()
		return err
	}
	runCtx, stop := context.WithCancelCause(ctx)
	status := nc.StatusChanged(nats.DISCONNECTED, nats.RECONNECTING, nats.CONNECTED, nats.CLOSED)
	inbox := make(chan *nats.Msg, inboxSize)
	d.mu.Lock()
	d.runCtx, d.stop = runCtx, stop
	d.req = requester{nc: nc, subj: d.subj, timeout: d.cfg.requestTimeout, session: d.holds, principal: d.cfg.principal,
		news: d.news}
	d.mu.Unlock()

	subs, err := d.listen(nc, inbox)
	if err == nil {
		d.wg.Add(4)
		go d.pump(runCtx, inbox)
		go d.watchStatus(runCtx, status)
		go d.watchdog(runCtx)
		go d.ackLoop(runCtx)
		err = d.loop(runCtx, nc, inbox, &subs)
	}
	err = refusedCredential(nc, err)
	stop(err)
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	cause := context.Cause(runCtx)
	nc.RemoveStatusListener(status)
	for _, s := range subs {
		if uerr := s.Unsubscribe(); uerr != nil && !errors.Is(uerr, nats.ErrConnectionClosed) {
			d.logger.Debug("unsubscribe", "subject", s.Subject, "error", uerr)
		}
	}
	d.wg.Wait()
	if owned {
		nc.Close()
	}
	d.finish()
	d.mu.Lock()
	fatal := refusedCredential(nc, d.fatal)
	d.mu.Unlock()
	switch {
	case fatal != nil:
		d.sched.Error(d, fatal)
		return fatal
	case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errTornDown):
		d.sched.Error(d, err)
		return err
	case errors.Is(cause, errTornDown):
		d.logger.Info("framework torn down")
	}
	return nil
}

// inboxSize bounds the messages the NATS client holds for the driver
// before the pump moves them into the unbounded event queue.
const inboxSize = 1 << 16

// listen subscribes to leader announcements and, when the framework ID is
// known, to the framework's events. Both feed one channel, so the driver
// sees them in the order the server delivered them: offers that follow a
// new leader's announcement are the new leader's.
func (d *Driver) listen(nc *nats.Conn, inbox chan *nats.Msg) ([]*nats.Subscription, error) {
	lsub, err := nc.ChanSubscribe(d.subj.Leader(), inbox)
	if err != nil {
		return nil, fmt.Errorf("subscribe to leader announcements: %w", err)
	}
	subs := []*nats.Subscription{lsub}
	if id := d.ID(); id != "" {
		esub, err := d.listenEvents(nc, id, inbox)
		if err != nil {
			return subs, err
		}
		subs = append(subs, esub)
	}
	return subs, nil
}

func (d *Driver) listenEvents(nc *nats.Conn, id protocol.FrameworkID, inbox chan *nats.Msg) (*nats.Subscription, error) {
	subject, err := d.subj.FrameworkEvents(d.cfg.principal, id)
	if err != nil {
		return nil, err
	}
	sub, err := nc.ChanSubscribe(subject, inbox)
	if err != nil {
		return nil, fmt.Errorf("subscribe to events: %w", err)
	}
	if err := nc.Flush(); err != nil && !errors.Is(err, nats.ErrConnectionReconnecting) {
		d.logger.Debug("flush after subscribing to events", "error", err)
	}
	return sub, nil
}

// fail ends Run with err, which Run reports through Scheduler.Error and
// returns. The first failure wins.
func (d *Driver) fail(err error) {
	d.mu.Lock()
	if d.fatal == nil {
		d.fatal = err
	}
	stop := d.stop
	d.mu.Unlock()
	d.logger.Error("framework driver stopping", "error", err)
	if stop != nil {
		stop(err)
	}
}

// checkFatal ends Run when err shows the master no longer knows the
// framework; it returns err.
func (d *Driver) checkFatal(err error) error {
	if !isGone(err) {
		return err
	}
	d.mu.Lock()
	tearing := d.tearing
	d.mu.Unlock()
	if !tearing {
		d.fail(err)
	}
	return err
}

// finish marks the driver stopped and fails waiting acknowledgements.
func (d *Driver) finish() {
	d.mu.Lock()
	d.stopped = true
	d.subscribed = false
	d.mu.Unlock()
	d.acks.close(ErrNotRunning)
}
