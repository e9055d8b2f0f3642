package scenario

import (
	"maps"
	"strings"
	"time"

	"github.com/allot-project/allot/protocol"
)

// Report is what a replay observed. Amounts are in scenario units (a file's
// units for File.Replay), shares are fractions of the cluster's capacity and
// times are seconds since the start.
type Report struct {
	// Policy is the allocation policy.
	Policy string `json:"policy"`
	// Preemption is the cluster's preemption settings.
	Preemption PreemptionReport `json:"preemption"`
	// End is when the replay stopped.
	End float64 `json:"end"`
	// Decisions counts the preemption decisions taken.
	Decisions int `json:"decisions"`
	// Nodes holds every role (by path) and leaf (by name).
	Nodes map[string]NodeReport `json:"nodes"`
	// Timeline has a point at the start and at every instant a leaf's
	// running tasks changed.
	Timeline []Point `json:"timeline"`
}

// PreemptionReport is the preemption settings a replay ran with.
type PreemptionReport struct {
	Policy      string  `json:"policy"`
	Interval    float64 `json:"interval"`
	Delay       float64 `json:"delay"`
	Deadline    float64 `json:"deadline"`
	MaxFraction float64 `json:"max_fraction"`
}

// NodeReport is a role's or leaf's outcome.
type NodeReport struct {
	// Leaf is set for a leaf (a framework).
	Leaf bool `json:"leaf,omitempty"`
	// Tasks is what the node's leaves run at the end.
	Tasks int64 `json:"tasks"`
	// Share is its dominant share at the end.
	Share float64 `json:"share"`
	// Guarantee is a role's guarantee; FairShare the node's H-DRF fair
	// share at the end (static H-DRF over every framework's demand).
	Guarantee map[string]float64 `json:"guarantee,omitempty"`
	FairShare map[string]float64 `json:"fair_share,omitempty"`
	// ReachedGuarantee and ReachedFairShare are when the node first held
	// at least its guarantee, and at least its fair share of that moment
	// (absent: never).
	ReachedGuarantee *float64 `json:"reached_guarantee,omitempty"`
	ReachedFairShare *float64 `json:"reached_fair_share,omitempty"`
	// Warned, Killed and Withdrawn count the node's tasks warned of
	// preemption, killed at their deadline and whose warning was
	// withdrawn; WarnedFor counts the tasks warned for the node's own need.
	Warned    int `json:"warned"`
	Killed    int `json:"killed"`
	Withdrawn int `json:"withdrawn"`
	WarnedFor int `json:"warned_for"`
	// Finished counts the tasks that ran their whole duration.
	Finished int `json:"finished"`
}

// Point is the running tasks of every leaf and the dominant share of every
// node at one time.
type Point struct {
	T      float64            `json:"t"`
	Tasks  map[string]int64   `json:"tasks"`
	Shares map[string]float64 `json:"shares"`
}

// recorder builds a Report while a replay runs.
type recorder struct {
	r     *Run
	unit  float64
	nodes map[string]*NodeReport
	last  map[string]int64 // tasks per leaf at the last point
	line  []Point
	plans int
}

func newRecorder(r *Run, unit float64) *recorder {
	rec := &recorder{r: r, unit: unit, nodes: map[string]*NodeReport{}}
	for key, n := range r.nodes {
		rec.nodes[key] = &NodeReport{Leaf: len(n.Children) == 0}
	}
	return rec
}

// keysUp is a leaf's name and the paths of the roles above it.
func (rec *recorder) keysUp(leaf string) []string {
	keys := []string{leaf}
	for role := rec.r.leafRole[leaf]; role != ""; {
		keys = append(keys, role)
		i := strings.LastIndexByte(role, '/')
		if i < 0 {
			break
		}
		role = role[:i]
	}
	return keys
}

// up calls f on a leaf and every role above it.
func (rec *recorder) up(leaf string, f func(n *NodeReport)) {
	for _, key := range rec.keysUp(leaf) {
		f(rec.nodes[key])
	}
}

func (rec *recorder) warn(leaf, need string) {
	rec.up(leaf, func(n *NodeReport) { n.Warned++ })
	// need is "role <path>" or "framework <id>".
	if _, key, ok := strings.Cut(need, " "); ok && rec.nodes[key] != nil {
		rec.nodes[key].WarnedFor++
	}
}

func (rec *recorder) kill(leaf string)     { rec.up(leaf, func(n *NodeReport) { n.Killed++ }) }
func (rec *recorder) withdraw(leaf string) { rec.up(leaf, func(n *NodeReport) { n.Withdrawn++ }) }
func (rec *recorder) finish(leaf string)   { rec.up(leaf, func(n *NodeReport) { n.Finished++ }) }

// sample records the state at t: a point if a leaf's tasks changed, and
// the first times nodes reach their guarantee and fair share.
func (rec *recorder) sample(t time.Duration) {
	alloc := map[string]protocol.Resources{}
	shares := map[string]float64{}
	for _, ns := range rec.r.Alloc.Shares() {
		if ns.Path == "" {
			continue
		}
		alloc[ns.Path] = ns.Allocation
		shares[ns.Path] = maxShare(ns.Shares)
	}
	fair := rec.fairShares()
	for key, n := range rec.nodes {
		node := rec.r.nodes[key]
		if t < firstArrival(*node) {
			continue
		}
		n.Share = shares[key]
		if n.ReachedGuarantee == nil && len(node.Guarantee) > 0 && covers(alloc[key], node.Guarantee) {
			n.ReachedGuarantee = seconds(t)
		}
		if f := fair[key]; n.ReachedFairShare == nil && len(f) > 0 && covers(alloc[key], f) {
			n.ReachedFairShare = seconds(t)
		}
	}
	tasks := make(map[string]int64, len(rec.r.leaves))
	for _, leaf := range rec.r.leaves {
		tasks[leaf] = rec.r.tasks[leaf] // every leaf listed, arrived or not
	}
	if rec.line != nil && maps.Equal(tasks, rec.last) {
		return
	}
	rec.last = tasks
	rec.line = append(rec.line, Point{T: t.Seconds(), Tasks: tasks, Shares: shares})
}

// fairShares sums the frameworks' fair shares up the tree.
func (rec *recorder) fairShares() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	for id, res := range rec.r.Alloc.FairShares() {
		for _, key := range rec.keysUp(string(id)) {
			if out[key] == nil {
				out[key] = map[string]int64{}
			}
			for name, v := range res.Scalars {
				out[key][name] += v
			}
		}
	}
	return out
}

// covers reports that have holds at least want of every resource.
func covers(have protocol.Resources, want map[string]int64) bool {
	for name, v := range want {
		if have.Scalar(name) < v {
			return false
		}
	}
	return true
}

func maxShare(sh map[string]float64) float64 {
	m := 0.0
	for _, v := range sh {
		m = max(m, v)
	}
	return m
}

func seconds(d time.Duration) *float64 {
	s := d.Seconds()
	return &s
}

// report finishes the Report at end.
func (rec *recorder) report(policy string, pre Preemption, end time.Duration) Report {
	rep := Report{Policy: policy, End: end.Seconds(), Decisions: rec.plans, Nodes: map[string]NodeReport{},
		Timeline: rec.line,
		Preemption: PreemptionReport{Policy: string(pre.Policy), Interval: pre.Interval.Seconds(),
			Delay: pre.Delay.Seconds(), Deadline: pre.Deadline.Seconds(), MaxFraction: pre.MaxFraction}}
	fair := rec.fairShares()
	for _, leaf := range rec.r.leaves {
		rec.up(leaf, func(n *NodeReport) { n.Tasks += rec.r.tasks[leaf] })
	}
	for key, n := range rec.nodes {
		n.Guarantee = rec.amounts(rec.r.nodes[key].Guarantee)
		n.FairShare = rec.amounts(fair[key])
		rep.Nodes[key] = *n
	}
	return rep
}

func (rec *recorder) amounts(v map[string]int64) map[string]float64 {
	if len(v) == 0 {
		return nil
	}
	out := map[string]float64{}
	for name, x := range v {
		out[name] = float64(x) / rec.unit
	}
	return out
}
