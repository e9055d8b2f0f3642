package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// BenchmarkFailover measures the time from killing the leader of a
// three-master cluster (Raft over TCP on loopback, state on disk) holding N
// registered agents to the first offer made by the new leader. One op is
// one failover; s/failover is the same number in seconds.
//
// Raft runs the timeouts `allot master` ships (raft=shipped), and, as a
// second row only, the 100 ms ones fast tests used to run (raft=test).
func BenchmarkFailover(b *testing.B) {
	sizes := []int{1000, 10000}
	if testing.Short() {
		sizes = []int{100} // the smoke run (make bench-smoke)
	}
	shipped := raftstore.DefaultConfig()
	timeouts := []struct {
		name             string
		heartbeat, lease time.Duration
	}{{"shipped", shipped.HeartbeatTimeout, shipped.LeaderLeaseTimeout}, {"test", 100 * time.Millisecond, 50 * time.Millisecond}}
	for _, n := range sizes {
		for _, to := range timeouts {
			benchFailover(b, n, to.name, to.heartbeat, to.lease)
		}
	}
}

func benchFailover(b *testing.B, n int, name string, heartbeat, lease time.Duration) {
	b.Run(fmt.Sprintf("agents=%d/raft=%s", n, name), func(b *testing.B) {
		var total time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := testcluster.New(b, testcluster.Options{
				Masters: 3, TCPRaft: true,
				HeartbeatTimeout: heartbeat, ElectionTimeout: heartbeat, LeaderLeaseTimeout: lease,
				AgentTimeout:   10 * time.Minute,
				RequestTimeout: 30 * time.Second,
				// The agents all register through one connection here;
				// each agent's own credential is rate limited in a
				// real cluster.
				Configure: func(_ int, cfg *master.Config) { cfg.AgentRateLimit = master.RateLimit{} },
			})
			nc := c.Connect("bench")
			registerAgents(b, c, nc, n)
			if got := len(c.WaitForLeader().View().Agents()); got != n {
				b.Fatalf("leader holds %d agents, want %d", got, n)
			}
			offers, prefix := subscribeForOffers(b, c, nc)
			b.StartTimer()
			start := time.Now()
			c.KillLeader()
			waitOfferNotFrom(b, offers, prefix)
			took := time.Since(start)
			b.StopTimer()
			total += took
			nc.Close()
		}
		b.ReportMetric(total.Seconds()/float64(b.N), "s/failover")
	})
}

// registerAgents registers n agents of 4 CPUs and heartbeats each once, so
// the leader offers them.
func registerAgents(b *testing.B, c *testcluster.Cluster, nc *nats.Conn, n int) {
	b.Helper()
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for w := 0; w < 128; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				var rep protocol.RegisterReply
				if err := benchRequest(nc, bySubject, protocol.MsgRegisterRequest,
					protocol.RegisterRequest{Hostname: fmt.Sprintf("bench-%d", i), Resources: agentResources(4)}, &rep); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
				if err := benchRequest(nc, bySubject, protocol.MsgHeartbeatRequest,
					protocol.HeartbeatRequest{AgentID: rep.AgentID}, nil); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	// Workers that fail stop taking work: stop handing it out then.
	func() {
		defer close(work)
		for i := 0; i < n; i++ {
			select {
			case work <- i:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// subscribeForOffers subscribes a framework, opens its offers, waits for
// its first offer and returns the offer channel and the leader's offer-ID
// prefix.
func subscribeForOffers(b *testing.B, c *testcluster.Cluster, nc *nats.Conn) (chan *nats.Msg, string) {
	b.Helper()
	s := c.Subjects()
	var sub protocol.SubscribeReply
	if err := benchRequest(nc, bySubject, protocol.MsgSubscribeRequest,
		protocol.SubscribeRequest{Name: "bench", Role: "eng", FailoverTimeout: time.Hour}, &sub); err != nil {
		b.Fatal(err)
	}
	ch := make(chan *nats.Msg, 1024)
	subject, _ := s.FrameworkEvents("", sub.FrameworkID)
	if _, err := nc.ChanSubscribe(subject, ch); err != nil {
		b.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := benchRequest(nc, bySubject, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: sub.FrameworkID}, nil); err != nil {
		b.Fatal(err)
	}
	id := waitOfferNotFrom(b, ch, "\x00")
	return ch, id[:strings.LastIndexByte(id, '-')]
}

// waitOfferNotFrom returns the ID of the first offer whose ID does not
// start with prefix (each leader has its own prefix).
func waitOfferNotFrom(b *testing.B, ch chan *nats.Msg, prefix string) string {
	b.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case msg := <-ch:
			env, err := protocol.Decode(msg.Data)
			if err != nil || env.Type != protocol.MsgOffersEvent {
				continue
			}
			var ev protocol.OffersEvent
			if err := protocol.DecodeBody(env, &ev); err != nil {
				continue
			}
			for _, o := range ev.Offers {
				if !strings.HasPrefix(string(o.ID), prefix+"-") {
					return string(o.ID)
				}
			}
		case <-deadline:
			b.Fatal("no offer from a new leader within 60s")
		}
	}
}

// benchRequest sends one API request, retrying while no leader answers.
func benchRequest(nc *nats.Conn, subject string, t protocol.MsgType, body, reply any) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if subject == bySubject {
		var err error
		if subject, err = (protocol.Subjects{}).RequestSubject("", body); err != nil {
			return err
		}
	}
	return testcluster.Request(ctx, nc, 10*time.Second, subject, t, body, reply)
}

// bySubject, as benchRequest's subject, is the subject the body calls for
// as an anonymous client.
const bySubject = ""
