package coflowsim

import (
	"math"

	"github.com/allot-project/allot/coflow"
)

// loadMeter counts the coordinator's load per interval of δ (docs/coflow.md):
// which agents sent it something, and whether it recomputed and pushed a
// schedule. Events arrive in time order.
type loadMeter struct {
	delta float64

	lastBusy  int64 // last interval counted as busy
	busyCount int

	cur      int64   // interval of the agents being counted
	stamp    []int64 // per port: 1 + the last interval it sent in
	agents   int     // distinct agents in cur
	agentSum int

	lastPush, lastRecompute int64
	pushIntervals           int
	recomputeIntervals      int
	pushes                  int

	completions, reports, rateRuns int
}

func newLoadMeter(ports int, delta float64) loadMeter {
	return loadMeter{delta: delta, lastBusy: -1, cur: -1, stamp: make([]int64, ports),
		lastPush: -1, lastRecompute: -1}
}

func (m *loadMeter) interval(t float64) int64 { return int64(math.Floor(t/m.delta + sameTime)) }

// busy marks the intervals overlapping [from, to) as busy.
func (m *loadMeter) busy(from, to float64) {
	lo := m.interval(from)
	hi := int64(math.Ceil(to/m.delta-sameTime)) - 1
	hi = max(hi, lo)
	lo = max(lo, m.lastBusy+1)
	if hi >= lo {
		m.busyCount += int(hi - lo + 1)
		m.lastBusy = hi
	}
}

// message records a message from the agent at port at time t.
func (m *loadMeter) message(t float64, port int) {
	k := max(m.interval(t), m.cur)
	m.busy(t, t)
	if k != m.cur {
		m.agentSum += m.agents
		m.cur, m.agents = k, 0
	}
	if m.stamp[port] != k+1 {
		m.stamp[port] = k + 1
		m.agents++
	}
}

// decision records that the coordinator moved from decision old to d at t.
func (m *loadMeter) decision(t float64, old, d *coflow.Decision) {
	k := m.interval(t)
	m.busy(t, t)
	if k != m.lastRecompute {
		m.lastRecompute = k
		m.recomputeIntervals++
	}
	if old != nil && sameGrants(old, d) {
		return
	}
	m.pushes++
	if k != m.lastPush {
		m.lastPush = k
		m.pushIntervals++
	}
}

// sameGrants reports whether two decisions grant the same flows in the
// same order with the same caps: an agent would not need the new one.
func sameGrants(a, b *coflow.Decision) bool {
	if a.FairShare != b.FairShare || a.EqualSplit != b.EqualSplit || len(a.Grants) != len(b.Grants) {
		return false
	}
	for i := range a.Grants {
		x, y := &a.Grants[i], &b.Grants[i]
		if x.Coflow != y.Coflow || x.Class != y.Class || len(x.Flows) != len(y.Flows) || len(x.Caps) != len(y.Caps) {
			return false
		}
		if len(x.Flows) > 0 && &x.Flows[0] != &y.Flows[0] {
			return false
		}
		for j := range x.Caps {
			if x.Caps[j] != y.Caps[j] {
				return false
			}
		}
	}
	return true
}

func (m *loadMeter) close() {
	m.agentSum += m.agents
	m.agents = 0
}

func (m *loadMeter) summary(recomputes int) Load {
	l := Load{IntervalMs: m.delta * 1e3, BusyIntervals: m.busyCount, PushIntervals: m.pushIntervals,
		RecomputeIntervals: m.recomputeIntervals, Recomputes: recomputes, Pushes: m.pushes,
		Completions: m.completions, Reports: m.reports, RateRuns: m.rateRuns}
	if m.busyCount > 0 {
		l.AgentsPerInterval = float64(m.agentSum) / float64(m.busyCount)
		l.PushFraction = float64(m.pushIntervals) / float64(m.busyCount)
	}
	return l
}
