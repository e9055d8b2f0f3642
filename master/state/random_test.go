package state

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// logGen generates random command logs over small ID pools, so commands
// collide: duplicates, unknown IDs, invalid fields and valid operations
// all occur. It peeks at a State to aim acknowledgements at real UUIDs.
type logGen struct {
	r    *rand.Rand
	now  int64
	uuid int
}

func newLogGen(seed uint64) *logGen {
	return &logGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: t0}
}

func (g *logGen) pick(n int) int { return g.r.IntN(n) }
func (g *logGen) chance(p float64) bool {
	return g.r.Float64() < p
}
func (g *logGen) agentID() protocol.AgentID { return protocol.AgentID(fmt.Sprintf("ag-%d", g.pick(5))) }
func (g *logGen) fwID() protocol.FrameworkID {
	return protocol.FrameworkID(fmt.Sprintf("fw-%d", g.pick(4)))
}
func (g *logGen) taskID() protocol.TaskID { return protocol.TaskID(fmt.Sprintf("t-%d", g.pick(12))) }
func (g *logGen) time() int64 {
	g.now += int64(g.pick(1000) + 1)
	if g.chance(0.02) {
		return 0 // invalid
	}
	return g.now
}
func (g *logGen) newUUID() protocol.StatusUUID {
	g.uuid++
	return protocol.StatusUUID(fmt.Sprintf("u-%d", g.uuid))
}

func (g *logGen) resources() protocol.Resources {
	r := protocol.Resources{Scalars: map[string]int64{
		protocol.ResCPUs: int64(g.pick(4000) + 1), protocol.ResMem: int64(g.pick(4096) + 1),
		protocol.ResDisk: int64(g.pick(100)), "custom.x": int64(g.pick(3)),
	}}
	if g.chance(0.5) {
		b := uint64(31000 + g.pick(100))
		r.Ranges = map[string]protocol.Ranges{protocol.ResPorts: {{Begin: b, End: b + uint64(g.pick(10))}}}
	}
	return r
}

func (g *logGen) attributes() protocol.Attributes {
	return protocol.Attributes{
		"rack": protocol.Text(fmt.Sprintf("r%d", g.pick(3))), "arch": protocol.Text("amd64"),
		"net_gbps": protocol.Number(float64(g.pick(100))), "gpu": protocol.Set("a100", "h100"),
	}
}

var (
	allStates  = protocol.TaskStates()
	liveStates = []protocol.TaskState{protocol.TaskStarting, protocol.TaskRunning, protocol.TaskKilling, protocol.TaskUnreachable}
)

func (g *logGen) status(fw protocol.FrameworkID, id protocol.TaskID) protocol.TaskStatus {
	st := protocol.TaskStatus{
		TaskID: id, FrameworkID: fw, State: allStates[g.pick(len(allStates))],
		Reason:  []string{"", protocol.ReasonCommandFailed, protocol.ReasonMemoryLimit}[g.pick(3)],
		Message: []string{"", "exit 1"}[g.pick(2)], Timestamp: g.now,
	}
	if g.chance(0.7) {
		st.State = liveStates[g.pick(len(liveStates))]
	}
	if g.chance(0.3) {
		code := g.pick(3)
		st.ExitCode = &code
	}
	return st
}

// next returns the next command of the log; s is the state the log is
// being applied to.
func (g *logGen) next(s *State) (CmdType, any) {
	v := s.Snapshot()
	switch g.pick(20) {
	case 0:
		c := &SetRole{Path: []string{"a", "a/b", "c", "bad//"}[g.pick(4)], Weight: []float64{0, 1, 2.5}[g.pick(3)]}
		if g.chance(0.4) {
			c.Quota = &Quota{Guarantee: g.resources(), Limit: g.resources()}
		}
		return CmdSetRole, c
	case 1:
		return CmdRemoveRole, &RemoveRole{Path: []string{"a", "a/b", "c"}[g.pick(3)]}
	case 2, 3:
		c := &RegisterFramework{
			ID: g.fwID(), Name: "f", Principal: []string{"p", "q"}[g.pick(2)], Role: []string{"a", "a/b", "c"}[g.pick(3)],
			Weight: float64(g.pick(3)), FailoverTimeout: time.Duration(g.pick(100)) * time.Second, Suppressed: g.chance(0.2),
			Resubscribe: g.chance(0.5), Time: g.time(),
		}
		for _, cp := range []string{protocol.CapPartitionAware, protocol.CapGang, protocol.CapAltruistic} {
			if g.chance(0.4) {
				c.Capabilities = append(c.Capabilities, cp)
			}
		}
		return CmdRegisterFramework, c
	case 4:
		return CmdSetFrameworkConnected, &SetFrameworkConnected{FrameworkID: g.fwID(), Connected: g.chance(0.5), Time: g.time()}
	case 5:
		if g.chance(0.3) {
			return g.storeCommand(v)
		}
		return CmdSetFrameworkSuppressed, &SetFrameworkSuppressed{FrameworkID: g.fwID(), Suppressed: g.chance(0.5)}
	case 6:
		if g.chance(0.15) {
			return CmdRemoveFramework, &RemoveFramework{FrameworkID: g.fwID()}
		}
		return CmdSetFrameworkSuppressed, &SetFrameworkSuppressed{FrameworkID: g.fwID()}
	case 7:
		return CmdRegisterAgent, &RegisterAgent{
			AgentID: g.agentID(), Hostname: "h", HTTPAddr: "1.2.3.4:5", Resources: g.resources(),
			Attributes: g.attributes(), Version: "v", Time: g.time(),
		}
	case 8:
		return g.reregisterAgent(v)
	case 9:
		states := []AgentState{AgentActive, AgentDraining, AgentUnreachable, AgentGone, "bogus"}
		st := states[g.pick(len(states))]
		if st == AgentGone && g.chance(0.7) {
			st = AgentUnreachable
		}
		c := &SetAgentState{AgentID: g.agentID(), State: st, Time: g.time()}
		if st == AgentDraining && c.Time%2 == 0 {
			// Derived, not drawn, so the rest of the log stays as it was.
			c.DrainDeadline = c.Time + 1e9
		}
		return CmdSetAgentState, c
	case 10:
		if g.chance(0.3) {
			return CmdRemoveAgent, &RemoveAgent{AgentID: g.agentID(), Time: g.time()}
		}
		fallthrough
	case 11:
		return g.markAgents()
	case 12, 13, 14:
		return g.launchTasks()
	case 15, 16, 17:
		return g.updateTaskStatus(v)
	default:
		return g.acknowledge(v)
	}
}

// reregisterAgent re-registers an agent with most of the tasks v lists
// on it, and sometimes one it does not know.
func (g *logGen) reregisterAgent(v *View) (CmdType, any) {
	c := &ReregisterAgent{AgentID: g.agentID(), Hostname: "h2", Resources: g.resources(), Attributes: g.attributes(), Time: g.time()}
	for _, t := range v.TasksByAgent(c.AgentID) {
		if g.chance(0.7) {
			c.Tasks = append(c.Tasks, g.status(t.FrameworkID, t.ID))
		}
	}
	if g.chance(0.3) {
		c.Tasks = append(c.Tasks, g.status(g.fwID(), g.taskID()))
	}
	return CmdReregisterAgent, c
}

// markAgents marks agents silent (or heard again), or an agent's tasks
// in some state.
func (g *logGen) markAgents() (CmdType, any) {
	if g.chance(0.25) {
		c := &MarkAgentsSilent{Time: g.time()}
		for n := g.pick(3); n > 0; n-- {
			// Since after Time (an invalid command) one time in eight.
			c.Silent = append(c.Silent, AgentSilence{AgentID: g.agentID(), Since: c.Time - 1000 + int64(g.pick(1150))})
		}
		if g.chance(0.5) {
			c.Heard = append(c.Heard, g.agentID())
		}
		return CmdMarkAgentsSilent, c
	}
	st := []protocol.TaskState{protocol.TaskUnreachable, protocol.TaskLost, protocol.TaskRunning}[g.pick(3)]
	return CmdMarkAgentTasks, &MarkAgentTasks{AgentID: g.agentID(), State: st, Reason: protocol.ReasonAgentUnreachable, Time: g.time()}
}

// launchTasks launches one to three tasks on an agent.
func (g *logGen) launchTasks() (CmdType, any) {
	c := &LaunchTasks{FrameworkID: g.fwID(), AgentID: g.agentID(), Time: g.time()}
	for n := g.pick(3) + 1; n > 0; n-- {
		info := protocol.TaskInfo{
			TaskID: g.taskID(), AgentID: c.AgentID, Resources: g.resources(),
			Command: protocol.CommandInfo{Value: "run", Env: map[string]string{"A": "1", "B": "2", "C": "3"}},
			Kind:    []protocol.OfferKind{"", protocol.OfferFair, protocol.OfferLeftover}[g.pick(3)],
			Labels:  map[string]string{"x": "1", "y": "2"},
		}
		c.Tasks = append(c.Tasks, info)
	}
	return CmdLaunchTasks, c
}

// updateTaskStatus sends one to four status updates, mostly for tasks v
// lists, some delivered twice.
func (g *logGen) updateTaskStatus(v *View) (CmdType, any) {
	c := &UpdateTaskStatus{Time: g.time()}
	tasks := v.Tasks()
	for n := g.pick(4) + 1; n > 0; n-- {
		fw, id, uuid := g.fwID(), g.taskID(), g.newUUID()
		if len(tasks) > 0 && g.chance(0.8) {
			t := tasks[g.pick(len(tasks))]
			fw, id = t.FrameworkID, t.ID
			if g.chance(0.1) {
				uuid = t.StatusUUID // duplicate delivery
			}
		}
		if uuid == "" {
			uuid = g.newUUID()
		}
		st := g.status(fw, id)
		c.Updates = append(c.Updates, protocol.StatusUpdate{UUID: uuid, Status: st})
	}
	return CmdUpdateTaskStatus, c
}

// acknowledge acknowledges one to three statuses, mostly of tasks v
// lists, some stale.
func (g *logGen) acknowledge(v *View) (CmdType, any) {
	c := &AcknowledgeStatus{FrameworkID: g.fwID()}
	tasks := v.Tasks()
	for range 1 + g.pick(3) {
		a := StatusAck{TaskID: g.taskID(), UUID: g.newUUID()}
		if len(tasks) > 0 && g.chance(0.8) {
			t := tasks[g.pick(len(tasks))]
			c.FrameworkID, a.TaskID, a.UUID = t.FrameworkID, t.ID, t.StatusUUID
			if a.UUID == "" {
				a.UUID = "stale"
			}
		}
		c.Acks = append(c.Acks, a)
	}
	return CmdAcknowledgeStatus, c
}

// randomLog applies n random commands to s at indexes from 1 and returns
// the encoded log.
func randomLog(t testing.TB, seed uint64, s *State, n int) [][]byte {
	t.Helper()
	g := newLogGen(seed)
	var log [][]byte
	for i := range n {
		typ, body := g.next(s)
		cmd, err := Encode(typ, body)
		if err != nil {
			t.Fatalf("Encode(%s): %v", typ, err)
		}
		if _, err := s.Apply(uint64(i+1), cmd); errors.Is(err, ErrCorrupt) {
			t.Fatalf("apply %s: %v", typ, err)
		}
		log = append(log, cmd)
	}
	return log
}

// storeCommand is a put or delete of a store entry, conditional at times
// on the entry's revision (current or stale), at times with a bad key.
func (g *logGen) storeCommand(v *View) (CmdType, any) {
	principal := []string{"p", "q", ""}[g.pick(3)]
	key := []string{"jobs/a", "jobs/b", "id", "bad\x01"}[g.pick(4)]
	var rev uint64
	if e, ok := v.StoreGet(principal, key); ok && g.chance(0.5) {
		rev = e.Revision
		if g.chance(0.3) {
			rev++ // stale
		}
	}
	if g.chance(0.25) {
		return CmdStoreDelete, &StoreDelete{Principal: principal, Key: key, IfRevision: rev}
	}
	c := &StorePut{Principal: principal, Key: key, Value: []byte(fmt.Sprint("value ", g.pick(100))), IfRevision: rev}
	if rev == 0 && g.chance(0.3) {
		c.Create = true
	}
	return CmdStorePut, c
}
