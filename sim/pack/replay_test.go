package pack

import (
	"testing"
	"time"
)

// One one-GPU node, speed-up 10:
//
//	p0 whole GPU, runs 0..100.
//	p1 whole GPU, created 10, runs 50 s: waits until p0 leaves at 100
//	   (wait 90), runs 100..150.
//	p2 500 milli, created 20, never scheduled by the trace, deleted at 30:
//	   runs 30-20 = 10 s; behind p1 in the queue at 100, placed at 150
//	   (wait 130), leaves at 160.
//	p3 whole GPU, created 200, no deletion time: stays.
//	p4 500 milli, created 210: never placed.
func TestPack_ReplayTimeline(t *testing.T) {
	t.Parallel()
	nodes := []Node{gpuNode("n0", 1, "T4")}
	pod := func(p Pod, name string, created, scheduled, deleted int64) Pod {
		p.Name, p.Created, p.Scheduled, p.Deleted = name, created, scheduled, deleted
		return p
	}
	trace := []Pod{
		pod(wholePod(0, 1), "p3", 200, 200, NoTime),
		pod(wholePod(0, 1), "p0", 0, 0, 100),
		pod(wholePod(0, 1), "p1", 10, 12, 62),
		pod(sharingPod(0, 500), "p2", 20, NoTime, 30),
		pod(sharingPod(0, 500), "p4", 210, NoTime, NoTime),
	}
	rec := &recordingPlacer{placed: map[string]time.Duration{}, removed: map[string]time.Duration{}}
	recording := Policy{Name: "recording", New: func(nodes []Node, w []Pod, seed uint64) (Placer, error) {
		rec.Placer = newPlacer(t, FirstFit(), nodes, w)
		return rec, nil
	}}
	r, err := RunReplay(ReplayConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{1}, Speedup: 10}, []Policy{recording})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Policies[0]
	if got.Waited != 3 || got.MeanWait != 110 || got.MaxWait != 130 || got.NeverPlaced != 1 {
		t.Fatalf("replay %+v; want 3 waited, mean wait 110 s, max 130 s, 1 never placed", got)
	}
	// The placer sees trace seconds divided by the speed-up.
	for name, want := range map[string]time.Duration{"p0": 0, "p1": 10 * time.Second, "p2": 15 * time.Second, "p3": 20 * time.Second} {
		if rec.placed[name] != want {
			t.Errorf("%s placed at %v, want %v", name, rec.placed[name], want)
		}
	}
	for name, want := range map[string]time.Duration{"p0": 10 * time.Second, "p1": 15 * time.Second, "p2": 16 * time.Second} {
		if rec.removed[name] != want {
			t.Errorf("%s removed at %v, want %v", name, rec.removed[name], want)
		}
	}
	if _, ok := rec.removed["p3"]; ok {
		t.Error("p3 has no deletion time but was removed")
	}
	if _, err := RunReplay(ReplayConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{1}}, []Policy{FirstFit()}); err == nil {
		t.Error("a replay without a speed-up was accepted")
	}
}

// Every reference policy replays a small slice of the real trace without an
// overcommit, and places every pod a departure leaves room for.
func TestPack_ReplayReferencePolicies(t *testing.T) {
	t.Parallel()
	nodes, err := LoadNodes("gpu")
	if err != nil {
		t.Fatal(err)
	}
	trace, err := LoadPods("default")
	if err != nil {
		t.Fatal(err)
	}
	// openb's own timeline never needs more than about 65 of its 6212 GPUs
	// at once: on 10 two-GPU nodes, its first 600 pods queue.
	nodes, trace = nodes[:10], trace[:600]
	r, err := RunReplay(ReplayConfig{Nodes: nodes, Trace: trace, Seeds: []uint64{1}, Speedup: DefaultSpeedup}, Policies())
	if err != nil {
		t.Fatal(err)
	}
	// Every pod departs in the end, so the pods never placed are those no
	// empty node can hold (the 8-GPU ones here).
	empty := NewCluster(nodes)
	unplaceable := 0
	for i := range trace {
		fits := false
		for n := range nodes {
			fits = fits || empty.Fits(n, &trace[i])
		}
		if !fits {
			unplaceable++
		}
	}
	if unplaceable == 0 {
		t.Fatal("the test expects some pods no node can hold")
	}
	for _, p := range r.Policies {
		if p.Waited <= float64(unplaceable) || p.NeverPlaced != float64(unplaceable) || p.MaxWait < p.MeanWait || p.MeanWait <= 0 {
			t.Errorf("%s: %+v; want %d never placed", p.Policy, p, unplaceable)
		}
	}
}
