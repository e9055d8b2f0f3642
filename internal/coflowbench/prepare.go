package coflowbench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

// blobFile is the file every agent's blob task leaves in its sandbox: a
// sparse file as large as the largest flow the agent sends, of which each
// flow fetches its first bytes (a Range request), so that no byte of the
// replay touches a disk.
const blobFile = "blob"

// preparer is the framework's scheduler: it launches one blob task on
// each of the cluster's agents (the trace's ports, in the agents' order
// by ID) and declines every other offer.
type preparer struct {
	framework.NopScheduler
	agents int   // how many the cluster has
	size   int64 // the blob's size

	mu       sync.Mutex
	launched map[protocol.AgentID]protocol.TaskID
	addrs    map[protocol.AgentID]string
	finished map[protocol.AgentID]bool
	failed   error
	ready    chan struct{}
	once     sync.Once
}

// blobTask resources: the least a task may ask for.
var blobResources = protocol.Scalars(map[string]int64{protocol.ResCPUs: 100, protocol.ResMem: 32})

func newPreparer(agents int, size int64) *preparer {
	return &preparer{agents: agents, size: size, launched: map[protocol.AgentID]protocol.TaskID{},
		addrs: map[protocol.AgentID]string{}, finished: map[protocol.AgentID]bool{}, ready: make(chan struct{})}
}

func (p *preparer) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var decline []protocol.OfferID
	for _, o := range offers {
		p.mu.Lock()
		_, done := p.launched[o.AgentID]
		if !done && o.Resources.Contains(blobResources) && o.Addresses.HTTP != "" {
			id := protocol.TaskID("blob-" + strconv.Itoa(len(p.launched)))
			p.launched[o.AgentID], p.addrs[o.AgentID] = id, o.Addresses.HTTP
			p.mu.Unlock()
			task := protocol.TaskInfo{TaskID: id, Name: "coflowbench blob", AgentID: o.AgentID, Resources: blobResources,
				Command: protocol.CommandInfo{Shell: true, Value: fmt.Sprintf("truncate -s %d %s", p.size, blobFile)}}
			if err := d.Launch(ctx, []protocol.OfferID{o.ID}, task); err != nil {
				p.fail(fmt.Errorf("launch the blob task on %s: %w", o.AgentID, err))
			}
			continue
		}
		p.mu.Unlock()
		decline = append(decline, o.ID)
	}
	if len(decline) > 0 {
		_ = d.Decline(ctx, decline, time.Hour)
	}
}

func (p *preparer) StatusUpdate(_ *framework.Driver, st protocol.TaskStatus) {
	switch {
	case st.State == protocol.TaskFinished:
		p.mu.Lock()
		p.finished[st.AgentID] = true
		all := len(p.finished) == p.agents
		p.mu.Unlock()
		if all {
			p.once.Do(func() { close(p.ready) })
		}
	case st.State.Terminal():
		p.fail(fmt.Errorf("blob task %s on %s: %s %s %s", st.TaskID, st.AgentID, st.State, st.Reason, st.Message))
	}
}

func (p *preparer) fail(err error) {
	p.mu.Lock()
	if p.failed == nil {
		p.failed = err
	}
	p.mu.Unlock()
	p.once.Do(func() { close(p.ready) })
}

// wait returns, once every agent holds its blob, the agents in ID order
// with their file servers and blob paths.
func (p *preparer) wait(ctx context.Context, d *framework.Driver) ([]agentBlob, error) {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the blob tasks on %d agents: %w", p.agents, ctx.Err())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed != nil {
		return nil, p.failed
	}
	var out []agentBlob
	for ag, task := range p.launched {
		out = append(out, agentBlob{id: ag, addr: p.addrs[ag], path: string(d.ID()) + "_" + string(task) + "/" + blobFile})
	}
	slices.SortFunc(out, func(a, b agentBlob) int { return cmp.Compare(a.id, b.id) })
	return out, nil
}

// agentBlob is one agent as the replay uses it: a port of the trace.
type agentBlob struct {
	id   protocol.AgentID
	addr string // its file server
	path string // its blob, under the file server's root
}
