package loadgen

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Report is what a run measured.
type Report struct {
	Config           Config
	AgentsRegistered time.Duration // from the first agent's connection to the last one's registration
	Window           time.Duration
	// Rounds are the allocation rounds in the window; RoundMean and
	// RoundP99 their time (the p99 is a bucket's upper bound).
	Rounds              int
	RoundMean, RoundP99 time.Duration
	// Commits are the commands applied through Raft in the window, and
	// their commit-and-apply time.
	Commits               int
	CommitMean, CommitP99 time.Duration
	OfferToLaunch         Quantiles
	// LeaderOfferToAcceptP99 and P50 are the leader's own
	// allot_offer_to_launch_seconds: from the round that made an offer to
	// the accept that launched on it (bucket upper bounds).
	LeaderOfferToAcceptP99, LeaderOfferToAcceptP50 time.Duration
	// AcceptCall is a launch call's round trip, as the framework sees it:
	// the leader's part of offer to launch.
	AcceptCall Quantiles
	// OfferWait and CallToAgent split OfferToLaunch at the launch call:
	// the framework's wait before it, and the call with the launch's way
	// to the agent after it.
	OfferWait, CallToAgent Quantiles
	// AgentsLag is how late the agents' process ran a timer due every
	// 10 ms in the window: a part of every command's way to an agent that
	// agents on machines of their own would not have.
	AgentsLag Quantiles
	// AgentOutages are the agents' NATS outages in the window.
	AgentOutages OutageStats
	// OfferToWire is from an offer's arrival at its framework to the
	// launch command's arrival at a client beside the agents: offer to
	// launch without the agents' process.
	OfferToWire Quantiles
	// AcceptCallCalm and OfferToWireCalm leave out the samples a leader
	// kill fell inside of (the launches the kills interrupted).
	AcceptCallCalm, OfferToWireCalm Quantiles
	StatusUpdate                    Quantiles
	MasterCPU                       []float64 // cores, by master, over the window
	MasterRSS, MasterHeap           []float64 // bytes, by master, at the window's end
	NATSMsgsPerSec                  float64   // the agents' NATS messages, in and out
	NATSBytesPerSec                 float64
	NATSReconnects                  uint64 // the agents' connections' reconnects in the window
	Kills                           []Kill
	Elections                       int // leader terms announced after the first
	Launched, LaunchErrors          int
	Ended                           map[string]int // by state (and reason)
	// Redelivered are terminal updates received again in the same state
	// (delivery is at least once); Conflicting ones in another state.
	Redelivered, Conflicting int
	NotEnded                 int
	// NotEndedStarted are those of NotEnded an agent had reported on.
	NotEndedStarted int
	// CatchUp is the follower restarted with an empty disk (--catch-up).
	CatchUp         *CatchUp
	AgentsActive    int
	Reregistrations int
}

// Kill is one leader kill.
type Kill struct {
	Master   int
	ToLeader time.Duration // until a master led again
	ToOffer  time.Duration // until a framework received an offer
}

// Quantiles summarizes latencies.
type Quantiles struct {
	N             int
	P50, P99, Max time.Duration
}

func quantiles(ds []time.Duration) Quantiles {
	if len(ds) == 0 {
		return Quantiles{}
	}
	slices.Sort(ds)
	return Quantiles{N: len(ds), P50: percentile(ds, 0.5), P99: percentile(ds, 0.99), Max: ds[len(ds)-1]}
}

// median of ds: the middle value, or the mean of the two middle ones
// (percentile's rank gives the lower of them). It sorts ds.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	n := len(ds)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

func seconds(s float64) time.Duration {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return -1
	}
	return time.Duration(s * float64(time.Second))
}

// Write prints the report as a table.
func (r Report) Write(w io.Writer) {
	c := r.Config
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("masters %d, agents %d (%d CPUs each), frameworks %d keeping %d tasks of ~%s, window %s, kills %d",
		c.Masters, c.Agents, c.AgentCPUs, c.Frameworks, c.Tasks, c.TaskDuration, r.Window.Round(time.Second), len(r.Kills))
	p("agents registered in        %s", r.AgentsRegistered.Round(time.Millisecond))
	p("allocation rounds           %d, mean %s, p99 ≤ %s", r.Rounds, r.RoundMean.Round(time.Microsecond), r.RoundP99)
	p("raft commits                %d (%.0f/s), mean %s, p99 ≤ %s", r.Commits, float64(r.Commits)/r.Window.Seconds(),
		r.CommitMean.Round(time.Microsecond), r.CommitP99)
	p("offer to launch             p50 %s, p99 %s, max %s (%d tasks)", ms(r.OfferToLaunch.P50), ms(r.OfferToLaunch.P99), ms(r.OfferToLaunch.Max), r.OfferToLaunch.N)
	p("  leader's offer to accept p50 ≤ %s, p99 ≤ %s (allot_offer_to_launch_seconds)", r.LeaderOfferToAcceptP50, r.LeaderOfferToAcceptP99)
	p("accept call (in the above)  p50 %s, p99 %s, max %s (%d calls)", ms(r.AcceptCall.P50), ms(r.AcceptCall.P99), ms(r.AcceptCall.Max), r.AcceptCall.N)
	p("  offer to call             p50 %s, p99 %s, max %s", ms(r.OfferWait.P50), ms(r.OfferWait.P99), ms(r.OfferWait.Max))
	p("  call to agent             p50 %s, p99 %s, max %s", ms(r.CallToAgent.P50), ms(r.CallToAgent.P99), ms(r.CallToAgent.Max))
	p("offer to launch on the wire p50 %s, p99 %s, max %s (%d tasks; the launch heard beside the agents)", ms(r.OfferToWire.P50), ms(r.OfferToWire.P99), ms(r.OfferToWire.Max), r.OfferToWire.N)
	if r.OfferToWireCalm.N > 0 {
		p("  no kill in flight         p50 %s, p99 %s, max %s (%d tasks); the call: p50 %s, p99 %s (%d calls)", ms(r.OfferToWireCalm.P50),
			ms(r.OfferToWireCalm.P99), ms(r.OfferToWireCalm.Max), r.OfferToWireCalm.N, ms(r.AcceptCallCalm.P50), ms(r.AcceptCallCalm.P99), r.AcceptCallCalm.N)
	}
	p("  agents' process lag       p50 %s, p99 %s, max %s (a 10 ms timer, late by)", ms(r.AgentsLag.P50), ms(r.AgentsLag.P99), ms(r.AgentsLag.Max))
	p("status update               p50 %s, p99 %s, max %s (%d updates)", ms(r.StatusUpdate.P50), ms(r.StatusUpdate.P99), ms(r.StatusUpdate.Max), r.StatusUpdate.N)
	var cpu, rss, heap []string
	for i := range r.MasterCPU {
		cpu = append(cpu, fmt.Sprintf("%.2f", r.MasterCPU[i]))
		rss = append(rss, fmt.Sprintf("%.0f", r.MasterRSS[i]/(1<<20)))
		heap = append(heap, fmt.Sprintf("%.0f", r.MasterHeap[i]/(1<<20)))
	}
	p("master CPU (cores)          %s", strings.Join(cpu, ", "))
	p("master RSS / heap (MiB)     %s / %s", strings.Join(rss, ", "), strings.Join(heap, ", "))
	p("agents' NATS traffic        %.0f msgs/s, %.1f MB/s, %d reconnects", r.NATSMsgsPerSec, r.NATSBytesPerSec/1e6, r.NATSReconnects)
	if o := r.AgentOutages; o.Reconnect.N > 0 || o.StillDown > 0 {
		p("agents' outages             connected again p50 %s, p99 %s, max %s (%d); heard p50 %s, p99 %s, max %s (%d); %d not heard since",
			ms(o.Reconnect.P50), ms(o.Reconnect.P99), ms(o.Reconnect.Max), o.Reconnect.N,
			ms(o.Heard.P50), ms(o.Heard.P99), ms(o.Heard.Max), o.Heard.N, o.StillDown)
		if len(o.Errors) > 0 {
			p("  errors meanwhile          %s", o.topErrors(4))
		}
	}
	for i, k := range r.Kills {
		p("kill %-2d                     m%d: leader again after %s, first offer after %s", i+1, k.Master, ms(k.ToLeader), ms(k.ToOffer))
	}
	if len(r.Kills) > 0 {
		var to []time.Duration
		for _, k := range r.Kills {
			to = append(to, k.ToOffer)
		}
		mid := median(to)
		p("kill to first offer         median %s, worst %s", ms(mid), ms(to[len(to)-1]))
	}
	if c := r.CatchUp; c != nil {
		p("follower catch-up           m%d: index %d applied %s after starting with an empty disk (snapshot %.1f MiB)",
			c.Master, c.Index, ms(c.Took), float64(c.SnapshotBytes)/(1<<20))
	}
	p("elections                   %d (%d from kills)", r.Elections, len(r.Kills))
	p("tasks                       %d launched (%d launch calls failed), ended %v, %d never ended (%d of them reported started)", r.Launched, r.LaunchErrors, r.Ended, r.NotEnded, r.NotEndedStarted)
	p("terminal updates again      %d in the same state, %d in another", r.Redelivered, r.Conflicting)
	p("agents                      %d active at the end, %d reregistrations", r.AgentsActive, r.Reregistrations)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
