package jobrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

// Runner runs the jobs in its principal's store.
type Runner struct {
	cfg Config
	// id names this runner in the lease.
	id    string
	log   hclog.Logger
	store *framework.Store

	mu    sync.Mutex
	jobs  map[string]*jobRun
	roles map[string]*roleSched
	wake  chan struct{}
	// changedRev is the revision of jobs.ChangedKey at the last scan of the
	// specs, scanned its time.
	changedRev uint64
	scanned    time.Time
	// kills are the tasks to kill, gathered under mu, sent outside it;
	// runs the periodic runs schedules fired, written to the store next.
	kills []pendingKill
	runs  []periodicRun
}

type pendingKill struct {
	role  string
	task  protocol.TaskID
	agent protocol.AgentID
}

// jobRun is the runner's state of one job.
type jobRun struct {
	name    string
	spec    jobs.SpecRecord
	specRev uint64
	job     *jobs.Job
	// status is the runner's account; statusDirty and liveDirty say what
	// to write back to the store.
	status      jobs.StatusRecord
	statusDirty bool
	insts       map[string]*instance
	liveDirty   bool
	// adoptedAt is when instances were read from the store after a
	// restart: planning waits for the master to confirm them.
	adoptedAt time.Time
	// revertTo is a version a failed update asked to go back to.
	revertTo int
}

// rescan is how often the runner reads every spec even when none was
// marked changed.
const rescan = 30 * time.Second

// adoptTimeout bounds the wait for the master's word on instances read
// from the store; one it never confirms counts as lost.
const adoptTimeout = 30 * time.Second

// New returns a runner; Run starts it.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, id: protocol.NewID("runner"), log: cfg.Logger.Named("jobs"), jobs: map[string]*jobRun{},
		roles: map[string]*roleSched{}, wake: make(chan struct{}, 1)}, nil
}

// Run runs the jobs until ctx ends, while this runner holds the lease of
// the active runner; a runner that loses it (another took over after it
// went unheard for LeaseTTL) stops its frameworks and waits for the lease
// again. The runner's frameworks stay registered, and their tasks running,
// for the failover timeout: a runner started again adopts them.
func (r *Runner) Run(ctx context.Context) error {
	store, err := framework.OpenStore(append(slices.Clone(r.cfg.Connect), framework.WithLogger(r.log))...)
	if err != nil {
		return err
	}
	defer store.Close()
	r.store = store
	for {
		rev, err := r.acquire(ctx)
		if err != nil {
			return nil // ctx ended
		}
		r.log.Info("active: running the jobs", "runner", r.id)
		rev = r.active(ctx, rev)
		r.stopRoles()
		if ctx.Err() != nil && rev != 0 {
			// Stopped, not overtaken: a waiting runner need not wait.
			release, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = r.store.Delete(release, leaseKey, rev)
			cancel()
		}
		r.mu.Lock()
		r.jobs, r.roles, r.kills, r.runs = map[string]*jobRun{}, map[string]*roleSched{}, nil, nil
		r.changedRev, r.scanned = 0, time.Time{}
		r.mu.Unlock()
		if ctx.Err() != nil {
			return nil
		}
		r.log.Warn("lost the lease to another runner: waiting")
	}
}

// active runs the jobs until ctx ends or the lease is lost, and returns
// the lease's last revision (0 when lost).
func (r *Runner) active(ctx context.Context, rev uint64) uint64 {
	tick := time.NewTicker(r.cfg.Interval)
	defer tick.Stop()
	renewed := time.Now()
	for {
		if time.Since(renewed) >= r.cfg.LeaseTTL/4 {
			next, err := r.writeLease(ctx, rev)
			switch {
			case errors.Is(err, protocol.ErrConflict):
				return 0
			case err == nil:
				rev, renewed = next, time.Now()
			case ctx.Err() == nil:
				r.log.Warn("renewing the lease", "error", err)
			}
		}
		if err := r.sync(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("reading the jobs", "error", err)
		}
		r.plan(ctx, time.Now())
		r.persist(ctx)
		r.startRuns(ctx)
		r.flushKills(ctx)
		r.declare(ctx)
		select {
		case <-ctx.Done():
			return rev
		case <-tick.C:
		case <-r.wake:
		}
	}
}

func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// sync reads the jobs' specs from the store: new jobs, new versions,
// stops.
func (r *Runner) sync(ctx context.Context) error {
	// The specs are read again when one changed, and every rescan anyway
	// (a writer that crashed before it marked its change).
	item, _, err := r.store.Get(ctx, jobs.ChangedKey)
	if err != nil {
		return err
	}
	if item.Revision == r.changedRev && time.Since(r.scanned) < rescan {
		return nil
	}
	names, err := Names(ctx, r.store)
	if err != nil {
		return err
	}
	r.changedRev, r.scanned = item.Revision, time.Now()
	for _, name := range names {
		spec, rev, err := jobs.ReadSpec(ctx, r.store, name)
		if err != nil || rev == 0 {
			continue
		}
		r.mu.Lock()
		jr := r.jobs[name]
		same := jr != nil && jr.specRev == rev
		r.mu.Unlock()
		if same {
			continue
		}
		src, v := name, spec.Version
		if spec.Parent != "" {
			src, v = spec.Parent, spec.ParentVersion
		}
		item, ok, err := r.store.Get(ctx, jobs.VersionKey(src, v))
		if err != nil || !ok {
			r.log.Warn("job version missing", "job", src, "version", v, "error", err)
			continue
		}
		job, err := jobs.Parse(fmt.Sprintf("%s v%d", src, v), item.Value)
		if err != nil {
			r.log.Warn("job version does not parse", "job", src, "version", v, "error", err)
			continue
		}
		if spec.Parent != "" {
			job.Name, job.Periodic = name, nil
		}
		if jr == nil {
			if jr, err = r.load(ctx, name); err != nil {
				r.log.Warn("reading job", "job", name, "error", err)
				continue
			}
		}
		olds := r.versionsRunning(ctx, jr, spec.Version)
		r.mu.Lock()
		if jr.job != nil && spec.Version != jr.spec.Version {
			keepInPlace(jr, job, spec.Version, olds)
		}
		jr.spec, jr.specRev, jr.job = spec, rev, job
		r.jobs[name] = jr
		r.mu.Unlock()
		r.ensureRole(ctx, job.Role)
		r.log.Info("job version", "job", name, "version", spec.Version, "stopped", spec.Stopped)
	}
	return nil
}

// load reads a job's status and the instances it had launched, which the
// runner adopts: their tasks are reconciled with the master once their
// role's framework is subscribed.
func (r *Runner) load(ctx context.Context, name string) (*jobRun, error) {
	jr := &jobRun{name: name, insts: map[string]*instance{}}
	if item, ok, err := r.store.Get(ctx, jobs.StatusKey(name)); err != nil {
		return nil, err
	} else if ok {
		if err := json.Unmarshal(item.Value, &jr.status); err != nil {
			return nil, err
		}
	}
	item, ok, err := r.store.Get(ctx, jobs.LiveKey(name))
	if err != nil || !ok {
		return jr, err
	}
	var live jobs.LiveRecord
	if err := json.Unmarshal(item.Value, &live); err != nil {
		return nil, err
	}
	for _, li := range live.Instances {
		_, ji, ok := jobs.ParseInstanceID(li.ID)
		if !ok || li.State.Ended() {
			continue
		}
		ji.State, ji.StartedAt = jobs.InstanceStarting, li.Since
		if li.Version > 0 {
			ji.Version = li.Version
		}
		jr.insts[li.ID] = &instance{Instance: ji, id: li.ID, job: name, role: li.Role, placed: true, adopted: true,
			agent: protocol.AgentID(li.Agent), taskIDs: li.Tasks, tasks: map[protocol.TaskID]protocol.TaskStatus{}}
		jr.adoptedAt = time.Now()
	}
	return jr, nil
}

// versionsRunning reads the jobs of the versions jr's live instances run,
// other than version, from the store.
func (r *Runner) versionsRunning(ctx context.Context, jr *jobRun, version int) map[int]*jobs.Job {
	r.mu.Lock()
	want := map[int]bool{}
	for _, in := range jr.insts {
		if !in.State.Ended() && in.Version != version {
			want[in.Version] = true
		}
	}
	current, currentJob := jr.spec.Version, jr.job
	r.mu.Unlock()
	out := map[int]*jobs.Job{}
	for v := range want {
		if v == current && currentJob != nil {
			out[v] = currentJob
			continue
		}
		item, ok, err := r.store.Get(ctx, jobs.VersionKey(jr.name, v))
		if err != nil || !ok {
			continue // no longer kept: its instances are replaced
		}
		if job, err := jobs.Parse(jr.name, item.Value); err == nil {
			out[v] = job
		}
	}
	return out
}
