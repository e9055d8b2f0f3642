package framework

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Launch launches tasks on offers, which must all be on one agent (the
// leader refuses offers on different agents in one accept). A task
// without an AgentID gets the offers' agent. Whatever the tasks do not use
// returns to the agent.
//
// An accept is sent once, never repeated: the leader forgets offers when
// leadership moves, so a repeat could only be refused. When no answer
// comes the error wraps ErrAmbiguous: the launch may have committed. The
// driver then reconciles the tasks, and their status updates (LOST with
// protocol.ReasonTaskUnknown for a launch that never committed) settle it.
// A refused accept changes nothing: its error wraps the leader's sentinel
// (protocol.ErrUnknownOffer for an offer rescinded or never made, also
// without asking the leader when a task names no agent and the driver no
// longer holds the offer it would take the agent from,
// protocol.ErrInsufficient, ...). An accept no leader received (during an
// election) changed nothing either: its error wraps protocol.ErrUnavailable
// and nats.ErrNoResponders, and its offers are gone; so does one answered
// protocol.ErrNotLeader by a leader that had just stepped down.
func (d *Driver) Launch(ctx context.Context, offerIDs []protocol.OfferID, tasks ...protocol.TaskInfo) error {
	return d.accept(ctx, offerIDs, nil, protocol.Operation{Type: protocol.OperationLaunch, Tasks: tasks})
}

// LaunchRefusing is Launch with accept filters, as Mesos's acceptOffers
// takes them: when the tasks leave part of the offers unused, the agent is
// refused to the framework for refuse, so it is not offered the remainder
// again meanwhile. Launch refuses nothing.
func (d *Driver) LaunchRefusing(ctx context.Context, offerIDs []protocol.OfferID, refuse time.Duration, tasks ...protocol.TaskInfo) error {
	if refuse < 0 {
		return fmt.Errorf("%w: negative refuse duration", protocol.ErrInvalidArgument)
	}
	f := &protocol.Filters{RefuseSeconds: refuse.Seconds()}
	return d.accept(ctx, offerIDs, f, protocol.Operation{Type: protocol.OperationLaunch, Tasks: tasks})
}

// LaunchGroup launches tasks as one group on one agent, all or nothing:
// the agent starts every task or none. Tasks get groupID as their GroupID.
// Otherwise it behaves as Launch.
func (d *Driver) LaunchGroup(ctx context.Context, offerIDs []protocol.OfferID, groupID string, tasks ...protocol.TaskInfo) error {
	op := protocol.Operation{Type: protocol.OperationLaunchGroup, GroupID: groupID, Tasks: slices.Clone(tasks)}
	for i := range op.Tasks {
		op.Tasks[i].GroupID = groupID
	}
	return d.accept(ctx, offerIDs, nil, op)
}

func (d *Driver) accept(ctx context.Context, offerIDs []protocol.OfferID, filters *protocol.Filters, op protocol.Operation) error {
	id, req, err := d.session()
	if err != nil {
		return err
	}
	if len(op.Tasks) == 0 {
		return fmt.Errorf("%w: launch without tasks", protocol.ErrInvalidArgument)
	}
	op.Tasks = slices.Clone(op.Tasks)
	d.mu.Lock()
	var agent protocol.AgentID
	held := false
	if len(offerIDs) > 0 {
		var o protocol.Offer
		o, held = d.outstanding[offerIDs[0]]
		agent = o.AgentID
	}
	d.mu.Unlock()
	for i := range op.Tasks {
		if op.Tasks[i].AgentID != "" {
			continue
		}
		if len(offerIDs) > 0 && !held {
			// The driver dropped the offer (rescinded, or voided by a
			// leader change) and with it the agent the task would name:
			// the leader would refuse the tasks as invalid and fail them.
			return fmt.Errorf("%w: offer %s is not held any more (rescinded, or made by a former leader)",
				protocol.ErrUnknownOffer, offerIDs[0])
		}
		op.Tasks[i].AgentID = agent
	}
	// Not validated here: the leader refuses an invalid accept with a
	// typed error and reports each of its tasks as TASK_ERROR, so the
	// scheduler sees a bad task end the same way whoever caught it.
	r := protocol.AcceptRequest{FrameworkID: id, OfferIDs: slices.Clone(offerIDs), Operations: []protocol.Operation{op}, Filters: filters}
	err = req.once(ctx, protocol.VerbAccept, r, nil)
	// Canceled while waiting for the answer: the accept may have gone out.
	unsure := err != nil && (ambiguous(err) || errors.Is(err, context.Canceled))
	d.mu.Lock()
	switch {
	case err == nil:
		kinds := d.launchKinds(offerIDs, op.Tasks)
		for i, t := range op.Tasks {
			d.launchedLocked(t, kinds[i])
		}
		d.dropOffersLocked(offerIDs)
	case unsure:
		for _, t := range op.Tasks {
			d.unsettled[t.TaskID] = t.AgentID
		}
		d.dropOffersLocked(offerIDs)
	case launchedNothing(err):
		// No leader took it: its offers died with the leader that made
		// them, or are unknown to the one elected next.
		d.dropOffersLocked(offerIDs)
	}
	d.mu.Unlock()
	if err == nil {
		d.logger.Debug("launched", "offers", len(offerIDs), "tasks", len(op.Tasks), "agent_id", agent)
		return nil
	}
	if unsure {
		d.logger.Warn("accept unanswered, reconciling its tasks", "tasks", len(op.Tasks), "error", err)
		d.background(func(ctx context.Context) {
			// Give the leader the time it gives a request to commit, so
			// the answer says whether it did.
			if !sleep(ctx.Done(), d.cfg.requestTimeout) {
				return
			}
			if err := d.reconcileUnsettled(ctx); err != nil && ctx.Err() == nil {
				d.logger.Warn("reconcile unanswered launches", "error", err)
			}
		})
		return fmt.Errorf("accept: %w: %w", ErrAmbiguous, err)
	}
	return d.checkFatal(refusedAccept(err))
}

// refusedAccept is the error of an accept that was refused or that no
// leader received. Nobody receiving it (an election) launched nothing
// either, and its offers are gone: it is typed as unavailable, so that
// schedulers take it as the stale offers it is, not as their tasks' fault.
func refusedAccept(err error) error {
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("accept: %w: %w", protocol.ErrUnavailable, err)
	}
	return fmt.Errorf("accept: %w", err)
}

func (d *Driver) dropOffersLocked(ids []protocol.OfferID) {
	for _, id := range ids {
		delete(d.outstanding, id)
	}
}

// NoFilter, as the refuse duration of Decline, installs no refuse filter:
// the declined resources may be offered again at once.
const NoFilter time.Duration = -1

// Decline returns offers unused. The master does not offer the declined
// agents' resources to this framework again for refuse (0 means the
// master's default filter, 5 s unless configured; NoFilter means none).
// Offers on different agents are declined in one request per agent.
func (d *Driver) Decline(ctx context.Context, offerIDs []protocol.OfferID, refuse time.Duration) error {
	var f *protocol.Filters
	switch {
	case refuse > 0:
		f = &protocol.Filters{RefuseSeconds: refuse.Seconds()}
	case refuse < 0:
		f = &protocol.Filters{}
	}
	return d.decline(ctx, offerIDs, f, false)
}

// DeclineLeftover returns offers unused to the leftover pool, from which
// the master offers them to other frameworks; no refuse filter is
// installed.
func (d *Driver) DeclineLeftover(ctx context.Context, offerIDs []protocol.OfferID) error {
	return d.decline(ctx, offerIDs, nil, true)
}

// Suppress stops offers to the framework until Revive. The driver keeps
// the framework suppressed across subscribes.
func (d *Driver) Suppress(ctx context.Context) error { return d.setSuppressed(ctx, true) }

// Revive resumes offers to the framework and clears its refuse filters.
func (d *Driver) Revive(ctx context.Context) error { return d.setSuppressed(ctx, false) }

func (d *Driver) setSuppressed(ctx context.Context, suppressed bool) error {
	d.mu.Lock()
	d.suppressed = suppressed
	if !suppressed {
		clear(d.refusals) // a revive clears the filters at the master
	}
	d.mu.Unlock()
	if !d.isReady() {
		return d.notStopped() // the first subscribe applies it
	}
	if _, _, err := d.session(); err != nil {
		return err
	}
	verb, body := protocol.VerbRevive, any(protocol.ReviveRequest{})
	return d.withState(ctx, func() error {
		d.mu.Lock()
		id, req, now := d.id, d.req, d.suppressed
		d.mu.Unlock()
		if now {
			verb, body = protocol.VerbSuppress, protocol.SuppressRequest{FrameworkID: id}
		} else {
			body = protocol.ReviveRequest{FrameworkID: id}
		}
		if err := req.retry(ctx, verb, body, nil, nil); err != nil {
			return d.checkFatal(fmt.Errorf("%s: %w", verb, err))
		}
		return nil
	})
}

// Kill asks for a task to be killed; its outcome arrives as a status
// update (KILLED). agentID may be empty; grace, when positive, overrides
// the task's kill grace period. A task the master does not know gives
// protocol.ErrUnknownTask.
func (d *Driver) Kill(ctx context.Context, taskID protocol.TaskID, agentID protocol.AgentID, grace time.Duration) error {
	id, req, err := d.session()
	if err != nil {
		return err
	}
	r := protocol.KillRequest{FrameworkID: id, TaskID: taskID, AgentID: agentID, GracePeriod: max(grace, 0)}
	if err := req.retry(ctx, protocol.VerbKill, r, nil, nil); err != nil {
		return d.checkFatal(fmt.Errorf("kill %s: %w", taskID, err))
	}
	return nil
}

// Reconcile asks the master to send the latest status of the named tasks
// (explicit), or of all the framework's tasks when none are named
// (implicit). They arrive as status updates with
// protocol.ReasonReconciliation and no UUID; a named task the master does
// not know comes back LOST with protocol.ReasonTaskUnknown.
func (d *Driver) Reconcile(ctx context.Context, tasks ...protocol.ReconcileTask) error {
	if _, _, err := d.session(); err != nil {
		return err
	}
	return d.reconcile(ctx, tasks)
}

func (d *Driver) reconcile(ctx context.Context, tasks []protocol.ReconcileTask) error {
	d.mu.Lock()
	id, req := d.id, d.req
	d.mu.Unlock()
	for {
		n := min(len(tasks), protocol.MaxListLen)
		r := protocol.ReconcileRequest{FrameworkID: id, Tasks: slices.Clone(tasks[:n])}
		if err := req.retry(ctx, protocol.VerbReconcile, r, nil, nil); err != nil {
			return d.checkFatal(fmt.Errorf("reconcile: %w", err))
		}
		if tasks = tasks[n:]; len(tasks) == 0 {
			return nil
		}
	}
}

// reconcileUnsettled explicitly reconciles the tasks of unanswered
// accepts; the first status update of each settles it.
func (d *Driver) reconcileUnsettled(ctx context.Context) error {
	d.mu.Lock()
	var tasks []protocol.ReconcileTask
	for t, ag := range d.unsettled {
		tasks = append(tasks, protocol.ReconcileTask{TaskID: t, AgentID: ag})
	}
	d.mu.Unlock()
	if len(tasks) == 0 {
		return nil
	}
	slices.SortFunc(tasks, func(a, b protocol.ReconcileTask) int {
		switch {
		case a.TaskID < b.TaskID:
			return -1
		case a.TaskID > b.TaskID:
			return 1
		}
		return 0
	})
	return d.reconcile(ctx, tasks)
}

// Teardown removes the framework: the master kills all its tasks and
// forgets it. Run then returns nil.
func (d *Driver) Teardown(ctx context.Context) error {
	id, req, err := d.session()
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.tearing = true
	d.mu.Unlock()
	// A repeated teardown whose first attempt succeeded unanswered finds
	// the framework gone: that is success.
	err = req.retry(ctx, protocol.VerbTeardown, protocol.TeardownRequest{FrameworkID: id}, nil, isGone)
	if err != nil {
		d.mu.Lock()
		d.tearing = false
		d.mu.Unlock()
		return fmt.Errorf("teardown: %w", err)
	}
	d.mu.Lock()
	stop := d.stop
	d.mu.Unlock()
	if stop != nil {
		stop(errTornDown)
	}
	return nil
}
