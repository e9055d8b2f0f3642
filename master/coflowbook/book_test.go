package coflowbook

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

var coflowT0 = time.Unix(1_700_000_000, 0)

func newTestCoflowBook(t *testing.T, scheduler string) *Book {
	t.Helper()
	b, err := New(scheduler, 7)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRegisterCoflow(t *testing.T, b *Book, fw, id string, flows ...protocol.FlowSpec) {
	t.Helper()
	if err := b.Register(coflowT0, &protocol.CoflowRegisterRequest{FrameworkID: protocol.FrameworkID(fw), CoflowID: id, Flows: flows}); err != nil {
		t.Fatalf("register %s/%s: %v", fw, id, err)
	}
}

func flow(src, dst string, transfers int) protocol.FlowSpec {
	return protocol.FlowSpec{Src: protocol.AgentID(src), Dst: protocol.AgentID(dst), Transfers: transfers}
}

// pushesByAgent renders a schedule's commands as agent -> its egress list,
// "fw/coflow>dst@queue" in rank order, then its ingress list,
// "fw/coflow<src@queue" in rank order.
func pushesByAgent(t *testing.T, pushes []Push) map[protocol.AgentID][]string {
	t.Helper()
	out := map[protocol.AgentID][]string{}
	for _, p := range pushes {
		out[p.Agent] = []string{}
		for i, e := range p.Cmd.Priorities {
			if e.Rank != i || e.Src != "" {
				t.Fatalf("agent %s egress entry %d: rank %d, src %q", p.Agent, i, e.Rank, e.Src)
			}
			out[p.Agent] = append(out[p.Agent], fmt.Sprintf("%s/%s>%s@%d", e.FrameworkID, e.CoflowID, e.Dst, e.Queue))
		}
		for i, e := range p.Cmd.Ingress {
			if e.Rank != i || e.Dst != "" {
				t.Fatalf("agent %s ingress entry %d: rank %d, dst %q", p.Agent, i, e.Rank, e.Dst)
			}
			out[p.Agent] = append(out[p.Agent], fmt.Sprintf("%s/%s<%s@%d", e.FrameworkID, e.CoflowID, e.Src, e.Queue))
		}
	}
	return out
}

// FIFO: flows leave each agent in coflow registration order.
func TestCoflowBook_FIFOOrder(t *testing.T) {
	b := newTestCoflowBook(t, "fifo")
	mustRegisterCoflow(t, b, "fw1", "c1", flow("a1", "a2", 1))
	mustRegisterCoflow(t, b, "fw2", "c2", flow("a1", "a3", 1), flow("a2", "a3", 1))
	pushes, _ := b.Schedule(coflowT0)
	got := pushesByAgent(t, pushes)
	want := map[protocol.AgentID][]string{
		"a1": {"fw1/c1>a2@-1", "fw2/c2>a3@-1"},
		"a2": {"fw2/c2>a3@-1", "fw1/c1<a1@-1"},
		"a3": {"fw2/c2<a1@-1", "fw2/c2<a2@-1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, p := range pushes {
		if p.Cmd.Epoch <= 7<<32 {
			t.Fatalf("epoch %d is not above term 7's base", p.Cmd.Epoch)
		}
	}
	later, err := New("fifo", 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := later.Register(coflowT0, &protocol.CoflowRegisterRequest{FrameworkID: "fw1", CoflowID: "c1", Flows: []protocol.FlowSpec{flow("a1", "a2", 1)}}); err != nil {
		t.Fatal(err)
	}
	if next, _ := later.Schedule(coflowT0); len(next) != 2 || next[0].Cmd.Epoch <= pushes[0].Cmd.Epoch {
		t.Fatalf("the next term's first command %+v does not supersede %+v", next, pushes[0].Cmd)
	}
	// Nothing changed: nothing to send again.
	if again, _ := b.Schedule(coflowT0.Add(time.Millisecond)); len(again) != 0 {
		t.Fatalf("an unchanged schedule sent %v", pushesByAgent(t, again))
	}
}

// Philae: a wide coflow (8 flows) pilots one flow, from its least busy
// sender (a1, the first); a thin coflow registered after it still goes
// first at a1, and the wide coflow's other flows are sent only as work
// conservation. Once the pilot is reported, the coflow has an estimate and
// enters a queue.
func TestCoflowBook_PhilaeOrder(t *testing.T) {
	b := newTestCoflowBook(t, "philae")
	var wide []protocol.FlowSpec
	for i := 1; i <= 8; i++ {
		wide = append(wide, flow(fmt.Sprintf("a%d", i), "r", 1))
	}
	mustRegisterCoflow(t, b, "fw", "wide", wide...)
	mustRegisterCoflow(t, b, "fw", "thin", flow("a1", "x", 1))
	pushes, _ := b.Schedule(coflowT0)
	got := pushesByAgent(t, pushes)
	if want := []string{"fw/thin>x@-1", "fw/wide>r@-1"}; !reflect.DeepEqual(got["a1"], want) {
		t.Fatalf("a1: got %v, want %v (all: %v)", got["a1"], want, got)
	}
	for i := 2; i <= 8; i++ {
		a := protocol.AgentID(fmt.Sprintf("a%d", i))
		if want := []string{"fw/wide>r@-1"}; !reflect.DeepEqual(got[a], want) {
			t.Fatalf("%s: got %v, want %v", a, got[a], want)
		}
	}
	views := b.Views()
	if len(views) != 2 || views[1].CoflowID != "wide" || views[1].Phase != "pilot" {
		t.Fatalf("views %+v, want wide piloting", views)
	}

	skipped := b.Report(coflowT0.Add(time.Second), &protocol.CoflowReportRequest{AgentID: "a1", Flows: []protocol.FlowProgress{
		{FrameworkID: "fw", CoflowID: "wide", Src: "a1", Dst: "r", BytesSent: 50 << 20, Transfers: 1},
	}})
	if skipped != 0 {
		t.Fatalf("%d entries skipped", skipped)
	}
	pushes, _ = b.Schedule(coflowT0.Add(time.Second))
	if got := pushesByAgent(t, pushes); len(got["a2"]) != 1 || got["a2"][0] == "fw/wide>r@-1" {
		t.Fatalf("after the pilot a2 got %v, want the wide coflow's flow in a main queue", got)
	}
	views = b.Views()
	if views[1].Phase != "queued" || views[1].Queue < 0 || views[1].EstimatedSize != 8*(50<<20) || views[1].Left != 7 {
		t.Fatalf("after the pilot: %+v, want queued with an estimate of 8 x 50 MiB and 7 flows left", views[1])
	}
}

// A flow finishes when its sender reports its transfers; a coflow whose
// flows have all finished is forgotten and its agents get empty lists.
func TestCoflowBook_CompletionAndMerge(t *testing.T) {
	b := newTestCoflowBook(t, "philae")
	mustRegisterCoflow(t, b, "fw", "s", flow("a1", "a2", 2))
	b.Schedule(coflowT0)
	report := func(src, dst string, transfers int) int {
		return b.Report(coflowT0, &protocol.CoflowReportRequest{AgentID: protocol.AgentID(src), Flows: []protocol.FlowProgress{
			{FrameworkID: "fw", CoflowID: "s", Src: protocol.AgentID(src), Dst: protocol.AgentID(dst), BytesSent: int64(transfers) * 100, Transfers: transfers},
		}})
	}
	report("a1", "a2", 1)
	// The shuffle grows: a second consumer on a3, and the first flow's
	// total is raised; what was sent counts.
	mustRegisterCoflow(t, b, "fw", "s", flow("a1", "a2", 3), flow("a1", "a3", 1))
	if v := b.Views(); len(v) != 1 || v[0].Flows != 2 || v[0].Left != 2 || v[0].BytesSent != 100 {
		t.Fatalf("after the merge: %+v, want 2 flows left and 100 bytes sent", v)
	}
	report("a1", "a2", 3)
	if v := b.Views(); v[0].Left != 1 {
		t.Fatalf("after a1>a2 reached its total: %+v, want 1 flow left", v)
	}
	// Another agent cannot report a1's flows; unknown coflows are skipped.
	if n := report("a2", "a3", 1); n != 1 {
		t.Fatalf("a forged report skipped %d entries, want 1", n)
	}
	if n := b.Report(coflowT0, &protocol.CoflowReportRequest{AgentID: "a1", Flows: []protocol.FlowProgress{
		{FrameworkID: "fw", CoflowID: "other", Src: "a1", Dst: "a2", Transfers: 1}}}); n != 1 {
		t.Fatalf("a report on an unknown coflow skipped %d entries, want 1", n)
	}
	report("a1", "a3", 1)
	if active, completed := b.Stats(); active != 0 || completed != 1 {
		t.Fatalf("active %d completed %d, want 0 and 1", active, completed)
	}
	pushes, _ := b.Schedule(coflowT0)
	if got := pushesByAgent(t, pushes); !reflect.DeepEqual(got, map[protocol.AgentID][]string{"a1": {}, "a2": {}}) {
		t.Fatalf("after completion the agents got %v, want a1 and a2 empty lists", got)
	}
	if len(b.ports) != 0 || len(b.free) != coflowPorts {
		t.Fatalf("ports still held: %v (%d free)", b.ports, len(b.free))
	}
}

// Withdrawing or removing the framework forgets coflows; a framework may
// keep only so many registered.
func TestCoflowBook_WithdrawAndLimits(t *testing.T) {
	b := newTestCoflowBook(t, "philae")
	mustRegisterCoflow(t, b, "fw", "s", flow("a1", "a2", 1))
	if err := b.Register(coflowT0, &protocol.CoflowRegisterRequest{FrameworkID: "fw", CoflowID: "s", Withdraw: true}); err != nil {
		t.Fatal(err)
	}
	if active, completed := b.Stats(); active != 0 || completed != 0 {
		t.Fatalf("after withdrawing: active %d completed %d", active, completed)
	}
	for i := range maxCoflowsPerFramework {
		mustRegisterCoflow(t, b, "fw", fmt.Sprintf("c%d", i), flow("a1", "a2", 1))
	}
	err := b.Register(coflowT0, &protocol.CoflowRegisterRequest{FrameworkID: "fw", CoflowID: "one-more", Flows: []protocol.FlowSpec{flow("a1", "a2", 1)}})
	if !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Fatalf("coflow %d: got %v, want ErrInvalidArgument", maxCoflowsPerFramework+1, err)
	}
	mustRegisterCoflow(t, b, "other", "c0", flow("a1", "a2", 1))
	b.RemoveFramework(coflowT0, "fw")
	if active, _ := b.Stats(); active != 1 {
		t.Fatalf("after removing fw: %d coflows, want other's 1", active)
	}
}

// Agents report again what they sent when a leader is elected, which may
// be before the framework registers its coflows with it: the progress is
// kept and applied when the coflow is registered.
func TestCoflowBook_ProgressBeforeRegistration(t *testing.T) {
	b := newTestCoflowBook(t, "philae")
	if n := b.Report(coflowT0, &protocol.CoflowReportRequest{AgentID: "a1", Flows: []protocol.FlowProgress{
		{FrameworkID: "fw", CoflowID: "s", Src: "a1", Dst: "a2", BytesSent: 300, Transfers: 3},
		{FrameworkID: "fw", CoflowID: "s", Src: "a9", Dst: "a2", BytesSent: 100, Transfers: 1}, // not a1's to report
	}}); n != 2 {
		t.Fatalf("%d entries skipped, want 2 (unknown coflow, forged sender)", n)
	}
	mustRegisterCoflow(t, b, "fw", "s", flow("a1", "a2", 3), flow("a1", "a3", 1), flow("a9", "a2", 1))
	v := b.Views()
	if len(v) != 1 || v[0].Left != 2 || v[0].BytesSent != 300 {
		t.Fatalf("after registration: %+v, want a1>a2 finished from the early report (300 bytes), 2 flows left", v)
	}
	if b.orphanCount != 0 || len(b.orphans) != 0 {
		t.Fatalf("orphans left: %d %v", b.orphanCount, b.orphans)
	}
	// Unclaimed reports are forgotten after a while.
	b.Report(coflowT0, &protocol.CoflowReportRequest{AgentID: "a1", Flows: []protocol.FlowProgress{
		{FrameworkID: "fw", CoflowID: "never", Src: "a1", Dst: "a2", Transfers: 1}}})
	b.Report(coflowT0.Add(2*orphanTTL), &protocol.CoflowReportRequest{AgentID: "a1", Flows: []protocol.FlowProgress{
		{FrameworkID: "fw", CoflowID: "other", Src: "a1", Dst: "a2", Transfers: 1}}})
	if _, ok := b.orphans[coflowKey{"fw", "never"}]; ok || b.orphanCount != 1 {
		t.Fatalf("after the TTL: orphans %v (%d), want only the fresh one", b.orphans, b.orphanCount)
	}
}

// The lists kept up to date as flows finish are the lists a rebuild from
// the coordinator's decision gives, after every event of a random run.
func TestCoflowBook_IncrementalListsMatchRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	b := newTestCoflowBook(t, "philae")
	now := coflowT0
	agents := []string{"a0", "a1", "a2", "a3", "a4", "a5"}
	type pair struct{ src, dst string }
	left := map[string][]pair{}
	for step := range 400 {
		now = now.Add(10 * time.Millisecond)
		if len(left) < 4 || rng.IntN(8) == 0 {
			id := fmt.Sprint("c", step)
			var flows []protocol.FlowSpec
			seen := map[pair]bool{}
			for range 1 + rng.IntN(12) {
				p := pair{agents[rng.IntN(len(agents))], agents[rng.IntN(len(agents))]}
				if !seen[p] {
					seen[p] = true
					flows = append(flows, flow(p.src, p.dst, 1))
					left[id] = append(left[id], p)
				}
			}
			if err := b.Register(now, &protocol.CoflowRegisterRequest{FrameworkID: "fw", CoflowID: id, Flows: flows}); err != nil {
				t.Fatal(err)
			}
		} else {
			ids := slices.Sorted(maps.Keys(left))
			id := ids[rng.IntN(len(ids))]
			i := rng.IntN(len(left[id]))
			p := left[id][i]
			left[id] = slices.Delete(left[id], i, i+1)
			if len(left[id]) == 0 {
				delete(left, id)
			}
			b.Report(now, &protocol.CoflowReportRequest{AgentID: protocol.AgentID(p.src), Flows: []protocol.FlowProgress{
				{FrameworkID: "fw", CoflowID: id, Src: protocol.AgentID(p.src), Dst: protocol.AgentID(p.dst), BytesSent: 1 << 20, Transfers: 1}}})
		}
		b.Schedule(now)
		kept := map[protocol.AgentID][2][]protocol.CoflowPriority{}
		for a, cmd := range b.sent {
			kept[a] = [2][]protocol.CoflowPriority{cmd.Priorities, cmd.Ingress}
		}
		b.rebuild = true
		b.sent = map[protocol.AgentID]protocol.CoflowPrioritiesCommand{}
		b.Schedule(now)
		rebuilt := map[protocol.AgentID][2][]protocol.CoflowPriority{}
		for a, cmd := range b.sent {
			rebuilt[a] = [2][]protocol.CoflowPriority{cmd.Priorities, cmd.Ingress}
		}
		if !reflect.DeepEqual(kept, rebuilt) {
			t.Fatalf("step %d: kept lists %v, rebuilt %v", step, kept, rebuilt)
		}
	}
}
