package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// exposition is a /metrics page with a histogram of n observations, of
// which below fall under 1 ms and the rest under 10 ms, summing to sum.
func exposition(n, below int, sum float64) string {
	return fmt.Sprintf(`# HELP allot_raft_apply_seconds x
# TYPE allot_raft_apply_seconds histogram
allot_raft_apply_seconds_bucket{le="0.001"} %d
allot_raft_apply_seconds_bucket{le="0.01"} %d
allot_raft_apply_seconds_bucket{le="+Inf"} %d
allot_raft_apply_seconds_sum %g
allot_raft_apply_seconds_count %d
allot_agents{state="active"} 7
allot_agents{state="unreachable"} 2
process_cpu_seconds_total 12.5
`, below, n, n, sum, n)
}

// TestScrape_histogramWindow: a histogram read twice gives what it
// gathered between the readings, its mean and its bucket quantiles, and
// labelled series add up.
func TestScrape_histogramWindow(t *testing.T) {
	page := exposition(10, 10, 0.005)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	m := &master{name: "m0", http: strings.TrimPrefix(srv.URL, "http://")}
	before, err := readMetrics(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	page = exposition(110, 20, 0.905)
	after, err := readMetrics(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	h := after.histogram("allot_raft_apply_seconds").since(before.histogram("allot_raft_apply_seconds"))
	if h.count != 100 || seconds(h.mean()) != 9*time.Millisecond {
		t.Fatalf("window: %v observations, mean %s; want 100 and 9ms", h.count, seconds(h.mean()))
	}
	if q := h.quantile(0.05); q != 0.001 {
		t.Errorf("p5 at most %g, want 0.001 (10 of 100 under 1 ms)", q)
	}
	if q := h.quantile(0.99); q != 0.01 {
		t.Errorf("p99 at most %g, want 0.01", q)
	}
	if sum := h.plus(h); sum.count != 200 || sum.counts[0] != 20 {
		t.Errorf("two masters' windows: %v observations, %v in the first bucket; want 200 and 20", sum.count, sum.counts[0])
	}
	if got := after.value("allot_agents"); got != 9 {
		t.Errorf("allot_agents over its labels: %v, want 9", got)
	}
	if got := after.value(`allot_agents{state="active"}`); got != 7 {
		t.Errorf("active agents: %v, want 7", got)
	}
}

// TestBusy_accounting: a launch the master refused is not counted as
// launched or ended; a task whose launch call failed but which runs
// counts; a terminal update delivered again counts once, and one in
// another state as a conflict.
func TestBusy_accounting(t *testing.T) {
	rec := newRecorder()
	b := newBusy(context.Background(), "fw", rec, 10, time.Second, 1)
	offer := protocol.Offer{ID: "of-A-1", AgentID: "ag-1",
		Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 3000, protocol.ResMem: 8192})}
	infos := b.plan(offer, time.Now())
	if len(infos) != 3 {
		t.Fatalf("planned %d tasks on 3 CPUs, want 3", len(infos))
	}
	// The first launch was refused, the second failed but ran, the third
	// succeeded.
	b.mu.Lock()
	for _, id := range []protocol.TaskID{infos[0].TaskID, infos[1].TaskID} {
		b.unsure[id] = b.live[id]
		delete(b.live, id)
	}
	b.mu.Unlock()
	b.launched(infos[2:])
	status := func(id protocol.TaskID, st protocol.TaskState, reason string) {
		b.StatusUpdate(nil, protocol.TaskStatus{TaskID: id, State: st, Reason: reason, Timestamp: time.Now().UnixNano()})
	}
	status(infos[0].TaskID, protocol.TaskLost, protocol.ReasonInvalidOffers)
	status(infos[1].TaskID, protocol.TaskRunning, "")
	status(infos[1].TaskID, protocol.TaskFinished, "")
	status(infos[2].TaskID, protocol.TaskFinished, "")
	status(infos[2].TaskID, protocol.TaskFinished, "")
	status(infos[2].TaskID, protocol.TaskFailed, "")
	if rec.launched != 2 || rec.ended["FINISHED"] != 2 || len(rec.ended) != 1 {
		t.Fatalf("launched %d, ended %v; want 2 launched, both FINISHED", rec.launched, rec.ended)
	}
	if rec.redelivered != 1 || rec.conflicting != 1 || b.running() != 0 {
		t.Fatalf("%d redelivered, %d conflicting, %d running; want 1, 1, 0", rec.redelivered, rec.conflicting, b.running())
	}
	// A short task runs and ends while its call waits: counted once
	// whether the call then fails or succeeds.
	more := b.plan(offer, time.Now())
	if len(more) != 3 {
		t.Fatalf("planned %d more tasks, want 3", len(more))
	}
	for _, info := range more[:2] {
		status(info.TaskID, protocol.TaskRunning, "")
		status(info.TaskID, protocol.TaskFinished, "")
	}
	b.launched(more[:1]) // the first call succeeds late
	b.mu.Lock()
	for _, info := range more[1:] { // the second fails, the third is in flight when it does
		if lt, ok := b.live[info.TaskID]; ok {
			b.unsure[info.TaskID] = lt
			delete(b.live, info.TaskID)
		}
	}
	b.mu.Unlock()
	status(more[2].TaskID, protocol.TaskRunning, "")
	status(more[2].TaskID, protocol.TaskFinished, "")
	if rec.launched != 5 || rec.ended["FINISHED"] != 5 {
		t.Fatalf("launched %d, ended %v; want 5 launched, 5 FINISHED", rec.launched, rec.ended)
	}
	if p := offerPrefix("of-ABC-12"); p != "of-ABC" {
		t.Fatalf("offer prefix %q, want of-ABC", p)
	}
}
