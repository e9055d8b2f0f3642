package dag

import (
	"context"
	"errors"
	"testing"

	"github.com/allot-project/allot/framework/altruism"
	"github.com/allot-project/allot/protocol"
)

// TestScheduler_Rerun: a map whose output was lost runs again as its next
// attempt, without counting a failure, before the reducer launches; the
// job then finishes. Reruns the scheduler cannot do are refused, typed.
func TestScheduler_Rerun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	if err := h.s.Rerun(ctx, "nope", "map", 0); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("rerun in an unknown job: %v, want ErrUnknownJob", err)
	}
	h.submit(t, mapReduce("mr"))
	h.offer("o1", protocol.OfferFair, cpus(3000))
	if err := h.s.Rerun(ctx, "mr", "map", 0); !errors.Is(err, altruism.ErrTaskState) {
		t.Fatalf("rerun of a running map: %v, want altruism.ErrTaskState", err)
	}
	if err := h.s.Rerun(ctx, "mr", "shuffle", 0); !errors.Is(err, altruism.ErrUnknownStage) {
		t.Fatalf("rerun in an unknown stage: %v, want altruism.ErrUnknownStage", err)
	}
	h.end("mr.map.0.1", protocol.TaskFinished)
	h.end("mr.map.1.1", protocol.TaskFinished)
	if err := h.s.Rerun(ctx, "mr", "map", 0); err != nil {
		t.Fatalf("rerun of a finished map: %v", err)
	}
	// The last map finishing does not open the barrier: map 0 runs again
	// first.
	h.end("mr.map.2.1", protocol.TaskFinished)
	h.offer("o2", protocol.OfferFair, cpus(1000))
	tasks := h.d.launched()
	if got := tasks[len(tasks)-1].TaskID; got != "mr.map.0.2" {
		t.Fatalf("launched %s, want the rerun mr.map.0.2", got)
	}
	h.offer("o3", protocol.OfferFair, cpus(1000))
	if n := len(h.d.launched()); n != 4 {
		t.Fatalf("launched %d tasks, want 4: the reducer waits for the rerun", n)
	}
	h.end("mr.map.0.2", protocol.TaskFinished)
	h.offer("o4", protocol.OfferFair, cpus(1000))
	tasks = h.d.launched()
	if got := tasks[len(tasks)-1].TaskID; got != "mr.reduce.0.1" {
		t.Fatalf("launched %s, want the reducer mr.reduce.0.1", got)
	}
	h.end("mr.reduce.0.1", protocol.TaskFinished)
	res, err := h.s.Wait(ctx, "mr")
	if err != nil || res.Failures != 0 {
		t.Fatalf("result %+v, error %v: want success with no failure", res, err)
	}
	if err := h.s.Rerun(ctx, "mr", "map", 1); !errors.Is(err, ErrJobEnded) {
		t.Fatalf("rerun in an ended job: %v, want ErrJobEnded", err)
	}
}
