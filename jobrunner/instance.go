package jobrunner

import (
	"strings"
	"time"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

// instance is one run of a group's tasks as the runner follows it.
type instance struct {
	jobs.Instance
	id    string
	job   string
	role  string
	group *jobs.Group
	// placed: launched on an agent; until then it waits for an offer.
	placed bool
	agent  protocol.AgentID
	// tasks holds the latest status of each of its tasks, by task ID.
	tasks   map[protocol.TaskID]protocol.TaskStatus
	taskIDs []protocol.TaskID
	// attrs are the agent's attributes, for group constraints.
	attrs   protocol.Attributes
	message string
	// adopted: known from the store after a restart, its state not yet
	// confirmed by the master.
	adopted bool
	// recorded: the store holds it, so it may be launched.
	recorded bool
	// checked are its tasks with a health check.
	checked map[protocol.TaskID]bool
}

// taskID is the ID of one task of an instance.
func taskID(instanceID, task string) protocol.TaskID { return protocol.TaskID(instanceID + "." + task) }

// instanceOf splits a task ID into its instance's ID and the task's name.
func instanceOf(id protocol.TaskID) (string, string, bool) {
	i := strings.LastIndexByte(string(id), '.')
	if i < 0 {
		return "", "", false
	}
	inst, task := string(id)[:i], string(id)[i+1:]
	if _, _, ok := jobs.ParseInstanceID(inst); !ok {
		return "", "", false
	}
	return inst, task, true
}

// observe records a task's status and works out the instance's state: it
// ends when every task has ended (finished only if every one finished),
// runs when every task runs, and is healthy when every task with a check
// passes it. It returns the tasks still live when one failed, which must
// be killed with it.
func (in *instance) observe(st protocol.TaskStatus, now time.Time) (killRest []protocol.TaskID) {
	if prev, ok := in.tasks[st.TaskID]; ok && prev.State.Terminal() {
		return nil // a task's end is final
	}
	in.tasks[st.TaskID] = st
	in.adopted = false
	if st.AgentID != "" {
		in.agent = st.AgentID
	}
	ended, finished, running, healthy := 0, 0, 0, true
	for _, id := range in.taskIDs {
		t, ok := in.tasks[id]
		switch {
		case !ok:
			healthy = false
		case t.State.Terminal():
			ended++
			if t.State == protocol.TaskFinished {
				finished++
			} else if in.message == "" {
				in.message = string(t.State) + " " + t.Reason + ": " + t.Message
			}
			if t.State == protocol.TaskLost || t.State == protocol.TaskDropped {
				in.Lost = true
			}
		case t.State == protocol.TaskRunning:
			running++
			// A task with a check is healthy once the check said so.
			if t.Healthy != nil && !*t.Healthy || t.Healthy == nil && in.checked[id] {
				healthy = false
			}
		default:
			healthy = false
		}
	}
	switch {
	case ended == len(in.taskIDs):
		in.State = jobs.InstanceFailed
		if finished == ended {
			in.State = jobs.InstanceFinished
		}
		in.EndedAt, in.Healthy = now, false
	case ended > 0:
		// One ended before the others: the instance fails as a whole.
		for _, id := range in.taskIDs {
			if t, ok := in.tasks[id]; !ok || !t.State.Terminal() {
				killRest = append(killRest, id)
			}
		}
	case running == len(in.taskIDs):
		in.State = jobs.InstanceRunning
		if healthy && !in.Healthy {
			in.HealthySince = now
		}
		in.Healthy = healthy
	}
	return killRest
}

func (in *instance) live() jobs.LiveInstance {
	since := in.StartedAt
	if in.State.Ended() {
		since = in.EndedAt
	} else if in.Healthy {
		since = in.HealthySince
	}
	return jobs.LiveInstance{ID: in.id, State: in.State, Healthy: in.Healthy, Agent: string(in.agent), Since: since,
		Message: in.message, Role: in.role, Tasks: in.taskIDs, Version: in.Version}
}
