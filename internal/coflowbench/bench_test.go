package coflowbench

import (
	"os"
	"testing"
	"time"

	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/internal/devcluster"
	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/sim/coflowsim"
)

// envShim makes the test binary the agents' task shim.
const envShim = "ALLOT_COFLOWBENCH_TEST_SHIM"

func TestMain(m *testing.M) {
	if os.Getenv(envShim) == "1" {
		os.Exit(runner.ShimMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// TestRun replays four coflows on two agents with a 4 MiB/s egress under
// philae and uncoordinated: every coflow completes under both, no sooner
// than its busiest sender could send its bytes, and the report puts the
// simulator beside them.
func TestRun(t *testing.T) {
	t.Parallel()
	const egress = 4 << 20
	tr := &coflowsim.Trace{Ports: 2}
	for i, fl := range [][]coflowsim.TraceFlow{
		{{Src: 0, Dst: 1, Bytes: 1 << 20}, {Src: 1, Dst: 0, Bytes: 256 << 10}},
		{{Src: 0, Dst: 0, Bytes: 64 << 10}},
		{{Src: 1, Dst: 0, Bytes: 512 << 10}, {Src: 1, Dst: 1, Bytes: 512 << 10}},
		{{Src: 0, Dst: 1, Bytes: 10}},
	} {
		c := coflowsim.TraceCoflow{ID: string(rune('a' + i)), ArrivalMs: int64(i) * 50, Flows: fl, PerFlow: true}
		for _, f := range fl {
			c.Mappers, c.Reducers = appendNew(c.Mappers, f.Src), appendNew(c.Reducers, f.Dst)
		}
		tr.Coflows = append(tr.Coflows, c)
	}
	cfg := Config{Trace: tr, Policies: []string{"philae", Uncoordinated}, Egress: egress, Slots: 64,
		DataDir: t.TempDir(), Logger: testlog.New(t), Configure: func(c *devcluster.Config) {
			c.AgentResources = protocol.Scalars(map[string]int64{protocol.ResCPUs: 1000, protocol.ResMem: 512})
			c.Isolation = runner.IsolationPortable
			c.AgentShim = []string{os.Args[0]}
			c.AgentShimEnv = []string{envShim + "=1", "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"}
		}}
	runs, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		if len(r.Coflows) != len(tr.Coflows) {
			t.Fatalf("%s: %d coflows, want %d", r.Policy, len(r.Coflows), len(tr.Coflows))
		}
		for i, res := range r.Coflows {
			perSender := map[int]int64{}
			for _, f := range tr.Coflows[i].Flows {
				perSender[f.Src] += f.Bytes
			}
			var least time.Duration
			for _, b := range perSender {
				least = max(least, time.Duration(float64(b)/egress*float64(time.Second)))
			}
			if res.ID != tr.Coflows[i].ID || res.CCT < least {
				t.Errorf("%s: coflow %s took %v, want %s at least %v (its busiest sender's bytes at 4 MiB/s)",
					r.Policy, res.ID, res.CCT, tr.Coflows[i].ID, least)
			}
		}
	}
	rows, err := Report(tr, egress, 0, runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].SimAvgMs <= 0 || rows[1].AvgMs <= 0 {
		t.Fatalf("report %+v", rows)
	}
}

func appendNew(xs []int, x int) []int {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}
