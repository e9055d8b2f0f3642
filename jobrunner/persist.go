package jobrunner

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

// persist writes to the store what changed: each job's status, and its
// live instances, before any new one is launched.
func (r *Runner) persist(ctx context.Context) {
	type write struct {
		jr     *jobRun
		key    string
		value  []byte
		marks  []*instance
		status bool
	}
	var writes []write
	r.mu.Lock()
	for _, name := range sortedKeys(r.jobs) {
		jr := r.jobs[name]
		if jr.statusDirty {
			jr.status.UpdatedAt = time.Now()
			data, _ := json.Marshal(jr.status)
			writes = append(writes, write{jr: jr, key: jobs.StatusKey(name), value: data, status: true})
			jr.statusDirty = false
		}
		if jr.liveDirty {
			var rec jobs.LiveRecord
			var marks []*instance
			for _, id := range sortedKeys(jr.insts) {
				in := jr.insts[id]
				rec.Instances = append(rec.Instances, in.live())
				marks = append(marks, in)
			}
			data, _ := json.Marshal(rec)
			writes = append(writes, write{jr: jr, key: jobs.LiveKey(name), value: data, marks: marks})
			jr.liveDirty = false
		}
	}
	r.mu.Unlock()
	for _, w := range writes {
		_, err := r.store.Put(ctx, w.key, w.value)
		r.mu.Lock()
		switch {
		case err != nil && w.status:
			w.jr.statusDirty = true
		case err != nil:
			w.jr.liveDirty = true
		default:
			for _, in := range w.marks {
				in.recorded = true
			}
		}
		r.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			r.log.Warn("writing to the store", "key", w.key, "error", err)
		}
	}
}

// flushKills sends the kills planning asked for.
func (r *Runner) flushKills(ctx context.Context) {
	r.mu.Lock()
	kills := r.kills
	r.kills = nil
	roles := r.roles
	r.mu.Unlock()
	for _, k := range kills {
		rs := roles[k.role]
		if rs == nil {
			continue
		}
		if err := rs.d.Kill(ctx, k.task, k.agent, 0); err != nil && ctx.Err() == nil {
			r.log.Warn("kill", "task_id", k.task, "error", err)
		}
	}
}

// declare tells each role's framework what its waiting instances need, so
// the master offers resources in those units, and suppresses offers while
// nothing waits.
func (r *Runner) declare(ctx context.Context) {
	r.mu.Lock()
	want := map[string][]protocol.TaskShape{}
	for role := range r.roles {
		waiting, _ := r.waitingLocked(role)
		counts := map[*instance]int64{}
		var firsts []*instance
		byGroup := map[string]*instance{}
		for _, in := range waiting {
			key := in.job + "/" + in.Group + "/" + strconv.Itoa(in.Version)
			if f, ok := byGroup[key]; ok {
				counts[f]++
				continue
			}
			byGroup[key] = in
			counts[in] = 1
			firsts = append(firsts, in)
		}
		shapes := []protocol.TaskShape{}
		for _, in := range firsts {
			shapes = append(shapes, shapeOf(in, counts[in]))
		}
		want[role] = shapes
	}
	roles := r.roles
	r.mu.Unlock()
	for role, shapes := range want {
		rs := roles[role]
		if shapesEqual(rs.declared, shapes) {
			continue
		}
		select {
		case <-rs.d.Ready():
		default:
			continue // the first subscribe comes first
		}
		var err error
		switch {
		case len(shapes) == 0:
			if err = rs.d.Suppress(ctx); err == nil {
				rs.suppressed = true
			}
		default:
			// Demand alone brings offers unless they were suppressed.
			if err = rs.d.Demand(ctx, shapes...); err == nil && rs.suppressed {
				if err = rs.d.Revive(ctx); err == nil {
					rs.suppressed = false
				}
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("declaring demand", "role", role, "error", err)
			}
			continue
		}
		rs.declared = shapes
	}
}

// shapeOf is the demand of count instances like in: its tasks together.
func shapeOf(in *instance, count int64) protocol.TaskShape {
	sum, ports := in.group.Need()
	s := placement.ShapeOf(protocol.TaskInfo{Resources: sum, Constraints: in.group.Constraints}, count)
	s.Ports = ports
	return s
}

func shapesEqual(a, b []protocol.TaskShape) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
