package integration

import (
	"fmt"
	"testing"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/protocol"
)

// TestMapReduce_PacedShuffle runs a word count and a sort on agents whose
// shuffle egress and ingress are capped: the outputs still verify, every
// byte the reducers fetched from an agent went through its egress port,
// and every one was granted by the receiving agent's ingress.
func TestMapReduce_PacedShuffle(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	var agents []*executors.Executor
	for i := range 3 {
		agents = append(agents, executors.New(t, c, executors.Options{
			Hostname:  fmt.Sprint("paced-", i),
			Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 2000, protocol.ResMem: 1024}),
			Configure: func(cfg *executor.Config) { cfg.ShuffleEgress, cfg.ShuffleIngress = 16<<20, 16<<20 },
		}))
	}
	r := startMapReduce(t, c, "--jobs", "wordcount:1MB@analytics,sort:1MB@batch",
		"--maps", "4", "--reducers", "2", "--cpus", "1000", "--mem", "64")
	checkVerified(t, r.wait(t), "wordcount-1", "sort-2")
	var sentAll, grantedAll int64
	for _, a := range agents {
		grantedAll += agentCounter(t, a, "allot_agent_shuffle_ingress_granted_bytes_total")
		sent := agentCounter(t, a, "allot_agent_shuffle_sent_bytes_total")
		paced := agentCounter(t, a, "allot_agent_shuffle_paced_bytes_total")
		if paced < sent {
			t.Errorf("agent %s: %d shuffle bytes sent, %d through the egress port", a.ID(), sent, paced)
		}
		sentAll += sent
	}
	t.Logf("the agents' shuffle sent %d bytes, their ingress granted %d", sentAll, grantedAll)
	if grantedAll < sentAll {
		t.Errorf("the receivers' ingress granted %d bytes of the %d the shuffle sent", grantedAll, sentAll)
	}
	if sentAll < 1<<20 {
		t.Errorf("the agents' shuffle sent %d bytes in all, want at least the sort's 1 MB", sentAll)
	}
}

// agentCounter reads a counter without labels from an agent's /metrics.
func agentCounter(t *testing.T, a *executors.Executor, name string) int64 {
	t.Helper()
	v, err := scrapeMetric(a.Agent().HTTPAddr(), name)
	if err != nil {
		t.Fatalf("agent %s: %v", a.ID(), err)
	}
	return int64(v)
}
