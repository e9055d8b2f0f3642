package executor

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/protocol"
)

// sandboxGC is the agent's sandbox collector (Mesos's --gc_delay and disk
// watch): every GCInterval, and at once after a task's end or a
// framework's shutdown when a budget is set or the disk was short, it
// lists sandboxes/, asks the policy (planGC) which to remove and removes
// them with their shims' records. It is a component with its own state:
// known belongs to the goroutine that runs the passes; gone and the
// statistics are under mu, which is never held with the task store's.
type sandboxGC struct {
	root, control string // WorkDir/sandboxes, WorkDir/control
	file          string // WorkDir/frameworks_gone.json
	policy        gcPolicy
	log           hclog.Logger
	poke          chan struct{}
	// pressured is set while the latest pass found the disk over its
	// threshold or the sandboxes over their budget.
	pressured atomic.Bool

	// known remembers the ended sandboxes: when each ended and its size,
	// measured once. It outlives the task store's short memory of ended
	// tasks, and is rebuilt from the disk after a restart.
	known map[string]*gcEntry

	saveMu sync.Mutex // serializes writes of the gone file
	mu     sync.Mutex
	gone   map[protocol.FrameworkID]time.Time
	stats  gcStats
	warned time.Time
}

// gcEntry is what the collector knows of an ended sandbox.
type gcEntry struct {
	fw    protocol.FrameworkID
	task  protocol.TaskID
	ended time.Time
	size  int64 // -1 until measured
}

// gcStats is what the metrics show (metrics.go).
type gcStats struct {
	disk      diskUsage
	sandboxes int
	bytes     int64
	removed   map[string]uint64 // by reason
	failed    uint64
	stuck     uint64
}

// gcWarnEvery rate-limits the warning that the disk stays short because
// of sandboxes the collector may not remove yet.
const gcWarnEvery = 10 * time.Minute

func newSandboxGC(cfg Config, log hclog.Logger) *sandboxGC {
	return &sandboxGC{
		root: filepath.Join(cfg.WorkDir, sandboxDir), control: filepath.Join(cfg.WorkDir, controlDir),
		file:   filepath.Join(cfg.WorkDir, goneFile),
		policy: gcPolicy{Delay: cfg.GCDelay, Threshold: cfg.GCDiskThreshold, Budget: cfg.GCDiskBudget},
		log:    log.Named("sandbox_gc"),
		poke:   make(chan struct{}, 1),
		known:  map[string]*gcEntry{},
		gone:   map[protocol.FrameworkID]time.Time{},
		stats:  gcStats{removed: map[string]uint64{gcReasonDelay: 0, gcReasonPressure: 0}},
	}
}

// load reads the frameworks known gone before a restart. An unreadable
// file is logged and forgotten: its frameworks count as live, which only
// keeps their sandboxes longer.
func (g *sandboxGC) load() {
	gone, err := loadGone(g.file)
	if err != nil {
		g.log.Error("frameworks known gone forgotten", "error", err)
	}
	pruneGone(gone, time.Now(), g.keepGone())
	g.mu.Lock()
	g.gone = gone
	g.mu.Unlock()
}

// keepGone is how long a framework is remembered gone: past it, every
// sandbox of its tasks is past its delay.
func (g *sandboxGC) keepGone() time.Duration { return 2*g.policy.Delay + time.Hour }

// nudge asks for a pass now (a task ended, a framework is gone) when one
// could remove something for the disk: a budget is set, which that end
// may have crossed, or the latest pass found pressure.
func (g *sandboxGC) nudge() {
	if g.policy.Budget <= 0 && !g.pressured.Load() {
		return
	}
	select {
	case g.poke <- struct{}{}:
	default:
	}
}

// frameworkGone records that fw was shut down, durably, and asks for a
// pass: its ended sandboxes may now go early when the disk is short.
func (g *sandboxGC) frameworkGone(fw protocol.FrameworkID) {
	g.setGone(fw, true)
	g.nudge()
}

// frameworkLaunched forgets that fw was gone: it launches tasks, so it
// reads their sandboxes.
func (g *sandboxGC) frameworkLaunched(fw protocol.FrameworkID) { g.setGone(fw, false) }

func (g *sandboxGC) setGone(fw protocol.FrameworkID, gone bool) {
	if g.isGone(fw) == gone {
		return // every launch asks: most change nothing
	}
	g.saveMu.Lock()
	defer g.saveMu.Unlock()
	g.mu.Lock()
	_, was := g.gone[fw]
	if was == gone {
		g.mu.Unlock()
		return
	}
	if gone {
		g.gone[fw] = time.Now()
		pruneGone(g.gone, time.Now(), g.keepGone())
	} else {
		delete(g.gone, fw)
	}
	snapshot := make(map[protocol.FrameworkID]time.Time, len(g.gone))
	for k, v := range g.gone {
		snapshot[k] = v
	}
	g.mu.Unlock()
	if err := saveGone(g.file, snapshot); err != nil {
		// Remembered until the agent stops all the same.
		g.log.Error("save the frameworks known gone", "framework_id", fw, "error", err)
	}
}

func (g *sandboxGC) isGone(fw protocol.FrameworkID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.gone[fw]
	return ok && fw != ""
}

// snapshot returns the statistics of the latest pass and the counters.
func (g *sandboxGC) snapshot() gcStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.stats
	s.removed = map[string]uint64{}
	for k, v := range g.stats.removed {
		s.removed[k] = v
	}
	return s
}

// sandboxTask is what the task store says of a sandbox: its task, and
// whether it runs or when it ended.
type sandboxTask struct {
	fw      protocol.FrameworkID
	task    protocol.TaskID
	running bool
	ended   time.Time
}

// pass lists the sandboxes, plans and removes. tasks is the task store's
// view, taken before the listing, so that a sandbox of a task launched
// meanwhile is at worst one the agent has no record of, which counts as
// just ended; runs tells, at the moment of removal, whether a task uses
// a name, and such a sandbox is never removed.
func (g *sandboxGC) pass(ctx context.Context, now time.Time, tasks map[string]sandboxTask, runs func(string) bool) {
	entries, err := os.ReadDir(g.root)
	if err != nil {
		g.log.Error("list sandboxes", "error", err)
		return
	}
	root, err := os.OpenRoot(g.root)
	if err != nil {
		g.log.Error("open sandboxes", "error", err)
		return
	}
	defer root.Close()
	seen := make(map[string]bool, len(entries))
	var sbs []gcSandbox
	for _, e := range entries {
		// A symbolic link or a file here, or a name the agent never
		// makes, is not a sandbox: left alone.
		if name := e.Name(); e.IsDir() && validSandboxName(name) {
			seen[name] = true
			sbs = append(sbs, g.sandbox(root, name, tasks, now))
		}
	}
	for name := range g.known {
		if !seen[name] {
			delete(g.known, name)
		}
	}
	disk, err := diskUsageOf(g.root)
	if err != nil {
		g.log.Debug("disk usage of the work dir", "error", err)
	}
	plan := planGC(sbs, now, g.policy, disk)
	removed, failed := g.remove(ctx, root, plan, runs)
	g.record(now, sbs, disk, plan, removed, failed)
}

// sandbox describes one sandbox for the policy.
func (g *sandboxGC) sandbox(root *os.Root, name string, tasks map[string]sandboxTask, now time.Time) gcSandbox {
	t, recorded := tasks[name]
	if recorded && t.running {
		delete(g.known, name)
		return gcSandbox{Name: name, Framework: t.fw, Task: t.task, Size: diskSize(root, name)}
	}
	e := g.known[name]
	if e == nil {
		e = &gcEntry{fw: frameworkOfName(name), size: -1}
		e.ended = endedOnDisk(root, g.control, name, now)
		g.known[name] = e
	}
	if recorded {
		// The task store knows better than the disk.
		e.fw, e.task, e.ended = t.fw, t.task, t.ended
	}
	if e.size < 0 {
		e.size = diskSize(root, name)
	}
	return gcSandbox{Name: name, Framework: e.fw, Task: e.task, Ended: e.ended, Size: e.size, FrameworkGone: g.isGone(e.fw)}
}

// remove carries out the plan's removals, in order, and returns the bytes
// freed and removals done by reason, and the removals that failed.
func (g *sandboxGC) remove(ctx context.Context, root *os.Root, plan gcPlan, runs func(string) bool) (map[string][2]int64, int) {
	done := map[string][2]int64{}
	failed := 0
	for _, r := range plan.Remove {
		if ctx.Err() != nil {
			break
		}
		if runs(r.Name) {
			continue // launched under this name since the listing
		}
		e := g.known[r.Name]
		if err := removeSandbox(root, r.Name); err != nil {
			// Tried again at the next pass.
			g.log.Error("remove sandbox", "sandbox", r.Name, "reason", r.Reason, "error", err)
			failed++
			continue
		}
		if err := os.RemoveAll(filepath.Join(g.control, r.Name)); err != nil {
			g.log.Warn("remove the shim's records", "sandbox", r.Name, "error", err)
		}
		delete(g.known, r.Name)
		n := done[r.Reason]
		done[r.Reason] = [2]int64{n[0] + 1, n[1] + r.Size}
		if e != nil {
			g.log.Debug("sandbox removed", "sandbox", r.Name, "framework_id", e.fw, "task_id", e.task,
				"reason", r.Reason, "bytes", r.Size, "ended", e.ended)
		}
	}
	return done, failed
}

// record updates the statistics after a pass, logs what it removed, and
// warns (rate-limited) when the disk stays short because of sandboxes of
// frameworks that may still read them.
func (g *sandboxGC) record(now time.Time, sbs []gcSandbox, disk diskUsage, plan gcPlan, done map[string][2]int64, failed int) {
	var total, freed int64
	for _, s := range sbs {
		total += s.Size
	}
	count := len(sbs)
	for reason, n := range done {
		count -= int(n[0])
		freed += n[1]
		g.log.Info("sandboxes removed", "reason", reason, "count", n[0], "bytes", n[1])
	}
	g.pressured.Store(plan.Pressure)
	g.mu.Lock()
	g.stats.disk, g.stats.sandboxes, g.stats.bytes = disk, count, total-freed
	for reason, n := range done {
		g.stats.removed[reason] += uint64(n[0])
	}
	g.stats.failed += uint64(failed)
	warn := false
	if plan.Stuck {
		g.stats.stuck++
		if warn = g.warned.IsZero() || now.Sub(g.warned) >= gcWarnEvery; warn {
			g.warned = now
		}
	}
	g.mu.Unlock()
	if warn {
		g.log.Warn("disk short, but the sandboxes left belong to running tasks or to frameworks that may still read them: kept until their delay",
			"disk_used_fraction", disk.fraction(), "threshold", g.policy.Threshold, "sandboxes", count,
			"sandboxes_bytes", total-freed, "budget_bytes", g.policy.Budget, "kept_ended", plan.Protected, "gc_delay", g.policy.Delay)
	}
}
