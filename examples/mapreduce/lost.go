package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/protocol"
)

// lostReadTimeout bounds reading a failed reducer's lost.json.
const lostReadTimeout = 5 * time.Second

// rerunLost runs again the maps whose outputs a failed reducer could not
// fetch, as Hadoop re-runs the maps of a lost machine: the reducer names
// them in lost.json in its sandbox. It runs before the scheduler sees the
// reducer's failure, so that the reducer's retry waits for those maps. A
// reducer that failed for another reason left no lost.json, and is only
// retried.
func (f *roleFramework) rerunLost(d *framework.Driver, st protocol.TaskStatus) {
	key, _, ok := parseTaskID(st.TaskID)
	if !ok || key.stage != stageReduce {
		return
	}
	f.mu.Lock()
	addr := f.addrs[st.AgentID]
	sandbox := string(f.id) + "_" + string(st.TaskID)
	f.mu.Unlock()
	if addr == "" {
		return
	}
	ctx, cancel := context.WithTimeout(f.ctx, lostReadTimeout)
	defer cancel()
	c := newFileClient(d.FilesToken())
	c.attempts = 1
	data, err := c.get(ctx, addr, sandbox+"/"+lostFile)
	if err != nil {
		return
	}
	var lost lostOutputs
	if err := json.Unmarshal(data, &lost); err != nil || len(lost.Sandboxes) != len(lost.Maps) {
		f.out.printf("[%s] %s: reducer %d left an unreadable %s\n", f.role, key.job, key.index, lostFile)
		return
	}
	for k, i := range lost.Maps {
		fin, current, ok := f.output(key.job, stageMap, i)
		if !ok || current != lost.Sandboxes[k] {
			continue // it has run again since the reducer was built
		}
		err := f.Scheduler.Rerun(ctx, key.job, stageMap, i)
		switch {
		case err == nil:
			f.out.printf("[%s] %s: map %d runs again: reducer %d could not fetch its output from %s\n",
				f.role, key.job, i, key.index, fin.agent)
		case errors.Is(err, altruism.ErrTaskState):
			// Running again already, at another reducer's word.
		default:
			f.out.printf("[%s] %s: cannot run map %d again: %v\n", f.role, key.job, i, err)
		}
	}
}

// AgentLost runs again, at once, every finished map whose output was on
// an agent the master took out of the cluster, in every job whose
// reducers still need it, rather than waiting for the reducers to fail to
// fetch it; maps running there come back as UNREACHABLE or LOST and run
// again as any lost task does.
func (f *roleFramework) AgentLost(_ *framework.Driver, ev protocol.AgentLostEvent) {
	type mapTask struct {
		job   string
		index int
	}
	var lost []mapTask
	f.mu.Lock()
	for k, fin := range f.done {
		if k.stage == stageMap && fin.agent == ev.AgentID {
			lost = append(lost, mapTask{k.job, k.index})
		}
	}
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(f.ctx, lostReadTimeout)
	defer cancel()
	for _, m := range lost {
		err := f.Scheduler.Rerun(ctx, m.job, stageMap, m.index)
		switch {
		case err == nil:
			f.out.printf("[%s] %s: map %d runs again: its output was on agent %s, %s\n", f.role, m.job, m.index, ev.AgentID, ev.State)
		case errors.Is(err, altruism.ErrTaskState), errors.Is(err, dag.ErrJobEnded):
			// Running again already, or no reducer needs it any more.
		default:
			f.out.printf("[%s] %s: cannot run map %d again: %v\n", f.role, m.job, m.index, err)
		}
	}
}
