package jobrunner

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

// roleSched is the framework the runner subscribes for one role: it
// places the role's instances on offers and follows their tasks.
type roleSched struct {
	framework.NopScheduler
	r    *Runner
	role string
	d    *framework.Driver
	stop context.CancelFunc
	done chan struct{}
	// declared is the demand last declared, to declare only changes;
	// suppressed, whether offers are suppressed.
	declared   []protocol.TaskShape
	suppressed bool
}

// ensureRole starts the role's framework if it is not running: with the
// framework ID the store holds for the role, so a restarted runner takes
// its tasks back.
func (r *Runner) ensureRole(ctx context.Context, role string) {
	r.mu.Lock()
	_, ok := r.roles[role]
	r.mu.Unlock()
	if ok {
		return
	}
	opts := append(slices.Clone(r.cfg.Connect), framework.WithName(r.cfg.Name), framework.WithFailoverTimeout(r.cfg.FailoverTimeout),
		framework.WithLogger(r.log.Named("framework")))
	if role != "" {
		opts = append(opts, framework.WithRole(role))
	}
	if item, ok, err := r.store.Get(ctx, frameworkKey(roleKey(role))); err == nil && ok {
		opts = append(opts, framework.WithFrameworkID(protocol.FrameworkID(item.Value)))
	}
	rs := &roleSched{r: r, role: role, done: make(chan struct{})}
	d, err := framework.NewDriver(rs, opts...)
	if err != nil {
		r.log.Error("cannot start the role's framework", "role", role, "error", err)
		return
	}
	rs.d = d
	runCtx, cancel := context.WithCancel(context.Background())
	rs.stop = cancel
	r.mu.Lock()
	r.roles[role] = rs
	r.mu.Unlock()
	go func() {
		defer close(rs.done)
		if err := d.Run(runCtx); err != nil {
			r.log.Error("the role's framework stopped", "role", role, "error", err)
		}
	}()
}

// roleKey names the default role in store keys.
func roleKey(role string) string {
	if role == "" {
		return "-"
	}
	return role
}

func (r *Runner) stopRoles() {
	r.mu.Lock()
	roles := r.roles
	r.mu.Unlock()
	for _, rs := range roles {
		rs.stop()
		<-rs.done
	}
}

// Registered records the framework's ID for the role.
func (rs *roleSched) Registered(d *framework.Driver, id protocol.FrameworkID) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rs.r.store.Put(ctx, frameworkKey(roleKey(rs.role)), []byte(id)); err != nil {
		rs.r.log.Error("cannot record the framework ID", "role", rs.role, "error", err)
	}
	rs.reconcile(d)
}

// Reregistered asks again about adopted instances a new leader may know.
func (rs *roleSched) Reregistered(d *framework.Driver) { rs.reconcile(d) }

// reconcile asks the master for the state of the adopted instances' tasks.
func (rs *roleSched) reconcile(d *framework.Driver) {
	rs.r.mu.Lock()
	var tasks []protocol.ReconcileTask
	for _, jr := range rs.r.jobs {
		for _, in := range jr.insts {
			if in.adopted && in.role == rs.role {
				for _, t := range in.taskIDs {
					tasks = append(tasks, protocol.ReconcileTask{TaskID: t, AgentID: in.agent})
				}
			}
		}
	}
	rs.r.mu.Unlock()
	if len(tasks) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Reconcile(ctx, tasks...); err != nil {
		rs.r.log.Warn("reconcile", "role", rs.role, "error", err)
	}
}

// StatusUpdate follows an instance's tasks. A task of the runner's that
// it does not know (launched by a runner that recorded nothing of it) is
// killed, so nothing runs twice.
func (rs *roleSched) StatusUpdate(d *framework.Driver, st protocol.TaskStatus) {
	r := rs.r
	instID, _, ok := instanceOf(st.TaskID)
	var kill []protocol.TaskID
	r.mu.Lock()
	var in *instance
	if ok {
		job, _, _ := jobs.ParseInstanceID(instID)
		if jr := r.jobs[job]; jr != nil {
			in = jr.insts[instID]
			if in != nil {
				kill = in.observe(st, time.Now())
				jr.liveDirty = true
			}
		}
	}
	r.mu.Unlock()
	if in == nil && !st.State.Terminal() {
		kill = append(kill, st.TaskID)
		r.log.Warn("killing a task no job holds", "task_id", st.TaskID)
	}
	for _, t := range kill {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := d.Kill(ctx, t, st.AgentID, 0); err != nil && !errors.Is(err, protocol.ErrUnknownTask) {
			r.log.Warn("kill", "task_id", t, "error", err)
		}
		cancel()
	}
	r.poke()
}

// Offers places the role's waiting instances: per offer, those whose
// constraints the agent meets and whose tasks fit, agents with fewest of
// the group on their spread values first.
func (rs *roleSched) Offers(d *framework.Driver, offers []protocol.Offer) {
	r := rs.r
	type launch struct {
		in    *instance
		offer protocol.OfferID
		tasks []protocol.TaskInfo
	}
	var launches []launch
	var unused []protocol.OfferID
	r.mu.Lock()
	waiting, peers := r.waitingLocked(rs.role)
	for _, o := range offers {
		avail, used := o.Resources, false
		for _, in := range waiting {
			if in.placed || !admits(in, o.Attributes, peers) {
				continue
			}
			if spreadLoad(in, o.Attributes, peers) > minSpreadLoad(in, offers, peers) {
				continue
			}
			tasks, left, ok := tasksFor(in, o.AgentID, avail)
			if !ok {
				continue
			}
			in.placed, in.agent, in.attrs, avail, used = true, o.AgentID, o.Attributes, left, true
			launches = append(launches, launch{in: in, offer: o.ID, tasks: tasks})
		}
		if !used {
			unused = append(unused, o.ID)
		}
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	byOffer := map[protocol.OfferID][]launch{}
	var order []protocol.OfferID
	for _, l := range launches {
		if _, ok := byOffer[l.offer]; !ok {
			order = append(order, l.offer)
		}
		byOffer[l.offer] = append(byOffer[l.offer], l)
	}
	for _, id := range order {
		var all []protocol.TaskInfo
		for _, l := range byOffer[id] {
			all = append(all, l.tasks...)
		}
		var err error
		if ls := byOffer[id]; len(ls) == 1 && len(ls[0].tasks) > 1 {
			err = d.LaunchGroup(ctx, []protocol.OfferID{id}, ls[0].in.id, all...)
		} else {
			err = d.Launch(ctx, []protocol.OfferID{id}, all...)
		}
		if err != nil {
			r.log.Warn("launch", "offer", id, "error", err)
			r.mu.Lock()
			for _, l := range byOffer[id] {
				l.in.placed = false // placed again on a later offer
			}
			r.mu.Unlock()
		}
	}
	if len(unused) > 0 {
		if err := d.Decline(ctx, unused, 2*time.Second); err != nil {
			r.log.Debug("decline", "error", err)
		}
	}
	r.poke()
}

// waitingLocked returns the role's instances waiting for an offer (the
// store holds them, oldest first) and every live instance of the role.
func (r *Runner) waitingLocked(role string) (waiting, peers []*instance) {
	for _, name := range sortedKeys(r.jobs) {
		jr := r.jobs[name]
		for _, id := range sortedKeys(jr.insts) {
			in := jr.insts[id]
			if in.role != role || in.State.Ended() {
				continue
			}
			peers = append(peers, in)
			if !in.placed && !in.Stopping && in.group != nil && in.recorded {
				waiting = append(waiting, in)
			}
		}
	}
	return waiting, peers
}

// minSpreadLoad is the least spread load any of offers' agents has for in.
func minSpreadLoad(in *instance, offers []protocol.Offer, peers []*instance) int {
	if len(in.group.Spread) == 0 {
		return 0
	}
	least := -1
	for _, o := range offers {
		if n := spreadLoad(in, o.Attributes, peers); least < 0 || n < least {
			least = n
		}
	}
	return max(least, 0)
}
