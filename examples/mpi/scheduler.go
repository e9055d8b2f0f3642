package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// scheduler hands every offer to the gang, remembers what each agent
// offered (its address, for rank 0's address and its files; its
// resources and attributes, to explain a gang that does not fit), and
// follows the ranks' statuses.
type scheduler struct {
	framework.NopScheduler
	gang   *framework.Gang
	ranks  int
	logger hclog.Logger

	mu      sync.Mutex
	agents  map[protocol.AgentID]protocol.Offer // the last offer of each agent
	status  map[protocol.TaskID]protocol.TaskStatus
	problem error         // the gang could not start, or the driver failed
	trouble chan struct{} // closed once problem is set
	ended   chan struct{} // closed once every rank finished, or one failed
}

// Refuse filters on the offers the scheduler declines: short while the
// gang acquires (an agent it cannot use now may be usable once it holds
// more there), long once it is done.
const (
	refuseAcquiring = time.Second
	refuseDone      = time.Minute
)

func newScheduler(ranks int, logger hclog.Logger) *scheduler {
	return &scheduler{
		ranks: ranks, logger: logger,
		agents:  map[protocol.AgentID]protocol.Offer{},
		status:  map[protocol.TaskID]protocol.TaskStatus{},
		trouble: make(chan struct{}),
		ended:   make(chan struct{}),
	}
}

// rankID is the task ID of rank r.
func rankID(r int) protocol.TaskID { return protocol.TaskID("rank-" + strconv.Itoa(r)) }

// Registered starts the gang: it declares its demand and gathers offers.
func (s *scheduler) Registered(d *framework.Driver, _ protocol.FrameworkID) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.gang.Start(ctx); err != nil {
		s.fail(fmt.Errorf("start the gang: %w", err))
	}
}

// Offers gives the gang every offer and declines what it returns.
func (s *scheduler) Offers(d *framework.Driver, offers []protocol.Offer) {
	s.mu.Lock()
	for _, o := range offers {
		s.agents[o.AgentID] = o
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rest, err := s.gang.Offer(ctx, offers)
	if err != nil {
		s.logger.Warn("gang launch failed", "error", err) // the gang's outcome reports it
	}
	if len(rest) == 0 {
		return
	}
	refuse := refuseAcquiring
	select {
	case <-s.gang.Done():
		refuse = refuseDone
	default:
	}
	if err := d.Decline(ctx, placement.OfferIDs(rest), refuse); err != nil {
		// The offers expire anyway; after the teardown the master
		// no longer knows the framework.
		s.logger.Debug("decline", "error", err)
	}
}

// StatusUpdate follows the ranks: ended closes when all finished or one
// ended otherwise.
func (s *scheduler) StatusUpdate(_ *framework.Driver, st protocol.TaskStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.status[st.TaskID]; ok && prev.State.Terminal() {
		return // a late duplicate or a reconciliation answer
	}
	s.status[st.TaskID] = st
	s.logger.Debug("rank status", "task_id", st.TaskID, "state", st.State, "message", st.Message)
	if !st.State.Terminal() {
		return
	}
	finished := 0
	for _, t := range s.status {
		if t.State.Terminal() && t.State != protocol.TaskFinished {
			s.endLocked()
			return
		}
		if t.State == protocol.TaskFinished {
			finished++
		}
	}
	if finished == s.ranks {
		s.endLocked()
	}
}

func (s *scheduler) endLocked() {
	select {
	case <-s.ended:
	default:
		close(s.ended)
	}
}

// Error records the error that ends the driver.
func (s *scheduler) Error(_ *framework.Driver, err error) { s.fail(err) }

func (s *scheduler) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.problem == nil {
		s.problem = err
		close(s.trouble)
	}
}

func (s *scheduler) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}

// statuses returns the last status of every rank, by rank; a rank that
// has none has state "".
func (s *scheduler) statuses() []protocol.TaskStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]protocol.TaskStatus, s.ranks)
	for r := range out {
		out[r] = s.status[rankID(r)]
		out[r].TaskID = rankID(r)
	}
	return out
}

// agent returns the last offer of an agent.
func (s *scheduler) agent(id protocol.AgentID) (protocol.Offer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.agents[id]
	return o, ok
}

// offered returns the last offer of every agent that made one, by
// hostname.
func (s *scheduler) offered() []protocol.Offer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]protocol.Offer, 0, len(s.agents))
	for _, o := range s.agents {
		out = append(out, o)
	}
	sortOffers(out)
	return out
}

// prepare is the gang's Prepare: once the ranks are placed, every rank
// learns rank 0's address, its agent's host and its first port.
func (s *scheduler) prepare(tasks []protocol.TaskInfo) error {
	root, err := s.rootAddr(tasks[0])
	if err != nil {
		return err
	}
	for i := range tasks {
		if tasks[i].Command.Env == nil {
			tasks[i].Command.Env = map[string]string{}
		}
		tasks[i].Command.Env[envRoot] = root
	}
	s.logger.Debug("rank 0 listens at", "addr", root)
	return nil
}

// rootAddr is where rank 0, placed as t, listens.
func (s *scheduler) rootAddr(t protocol.TaskInfo) (string, error) {
	ports := placement.PortList(t.Resources.Ranges[protocol.ResPorts])
	if len(ports) == 0 {
		return "", fmt.Errorf("rank 0 was given no port")
	}
	o, ok := s.agent(t.AgentID)
	if !ok {
		return "", fmt.Errorf("no offer seen from rank 0's agent %s", t.AgentID)
	}
	return net.JoinHostPort(agentHost(o), strconv.FormatUint(ports[0], 10)), nil
}

// agentHost is where an agent's tasks are reached: the host of its
// advertised address, or its hostname.
func agentHost(o protocol.Offer) string {
	if host, _, err := net.SplitHostPort(o.Addresses.HTTP); err == nil && usableHost(host) {
		return host
	}
	return o.Hostname
}
