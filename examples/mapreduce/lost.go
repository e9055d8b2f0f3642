package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/altruism"
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
