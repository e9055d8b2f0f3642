package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/simagent"
	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// fleet is the simulated agents, each on a NATS connection of its own.
type fleet struct {
	agents  []*simagent.Agent
	conns   []*nats.Conn
	outages *outages
}

// startFleet connects n agents, spread over the masters' NATS servers,
// at most parallel at a time, and returns once all are registered.
func startFleet(ctx context.Context, urls []string, n, parallel int, res protocol.Resources, log hclog.Logger) (*fleet, error) {
	f := &fleet{agents: make([]*simagent.Agent, n), conns: make([]*nats.Conn, n), outages: newOutages(log.Named("outages"))}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, parallel)
	for range parallel {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f.start(ctx, i, urls, res, log); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		f.close()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *fleet) start(ctx context.Context, i int, urls []string, res protocol.Resources, log hclog.Logger) error {
	// Agent i prefers master i mod 3's server, as agents spread over a
	// real trio would.
	order := append(append([]string{}, urls[i%len(urls):]...), urls[:i%len(urls)]...)
	opts := append(append(natsclient.AgentOptions(), nats.DontRandomize()), f.outages.options(i)...)
	nc, err := connectPatiently(ctx, strings.Join(order, ","), opts...)
	if err != nil {
		return fmt.Errorf("agent %d: connect: %w", i, err)
	}
	name := fmt.Sprintf("sim%d", i)
	a, err := simagent.Start(nc, protocol.Subjects{}, i, simagent.Options{Hostname: name, Principal: name,
		Resources: res, Version: "loadgen", StallCheck: agentStallCheck, RequestTimeout: agentRequestTimeout,
		OnHeartbeat: func(err error) { f.outages.heartbeat(i, err) }}, log.Named(name))
	if err != nil {
		nc.Close()
		return fmt.Errorf("agent %d: %w", i, err)
	}
	f.agents[i], f.conns[i] = a, nc
	return nil
}

// connectAttempts is how many times an agent tries to connect before the
// run gives up: a real agent keeps trying, and on a machine whose cores the
// masters are saturating while thousands of agents connect, a dial may
// time out once without anything being wrong.
const connectAttempts = 5

// connectPatiently connects, trying again after a growing pause when a
// dial fails.
func connectPatiently(ctx context.Context, url string, opts ...nats.Option) (*nats.Conn, error) {
	return patiently(ctx, connectAttempts, func() (*nats.Conn, error) { return nats.Connect(url, opts...) })
}

// patiently calls try until it succeeds, at most attempts times, pausing
// half a second longer after each failure; it stops early when ctx ends.
func patiently[T any](ctx context.Context, attempts int, try func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := try()
		if err == nil {
			return v, nil
		}
		if attempt >= attempts {
			return v, fmt.Errorf("%d attempts: %w", attempt, err)
		}
		select {
		case <-ctx.Done():
			return v, errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
		}
	}
}

// traffic sums the agents' NATS statistics.
func (f *fleet) traffic() nats.Statistics {
	var s nats.Statistics
	for _, nc := range f.conns {
		if nc == nil {
			continue
		}
		st := nc.Stats()
		s.InMsgs += st.InMsgs
		s.OutMsgs += st.OutMsgs
		s.InBytes += st.InBytes
		s.OutBytes += st.OutBytes
		s.Reconnects += st.Reconnects
	}
	return s
}

// registrations counts the agents' registrations, first ones included.
func (f *fleet) registrations() int {
	n := 0
	for _, a := range f.agents {
		if a != nil {
			n += a.Registrations()
		}
	}
	return n
}

func (f *fleet) close() {
	var wg sync.WaitGroup
	for _, a := range f.agents {
		if a != nil {
			wg.Go(a.Close)
		}
	}
	wg.Wait()
}

// clientOptions are the NATS options of the load's clients: a real
// client's (natsclient.Options), but patient with unanswered pings. Real
// agents each have a machine; here thousands share one process and two
// cores with the masters, and a client starved of CPU for two seconds must
// not be taken for one cut off from its server.
func clientOptions(extra ...nats.Option) []nats.Option {
	return append(append(natsclient.Options(), nats.MaxPingsOutstanding(30)), extra...)
}

// agentRequestTimeout bounds a simulated agent's request, as the real
// agent's default does (executor.DefaultRequestTimeout).
const agentRequestTimeout = 2 * time.Second

// agentStallCheck is how long a simulated agent waits for its server's
// answer to a ping, after a heartbeat went unanswered, before it gives the
// server up: patient, for the reason clientOptions are.
const agentStallCheck = 10 * time.Second
