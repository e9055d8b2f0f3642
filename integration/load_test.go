package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/loadgen"
	"github.com/allot-project/allot/internal/testlog"
)

// TestBenchLoad_smoke runs `allot bench load` small: three master
// processes, thirty simulated agents, two frameworks, one leader kill.
// Every launched task ends once, as FINISHED or KILLED; the kill is
// followed by a new leader and an offer; a follower restarted with an
// empty disk catches up; every agent is still active.
func TestBenchLoad_smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three master processes")
	}
	cfg := loadgen.DefaultConfig()
	cfg.Bin = allotBinary(t)
	cfg.Dir = t.TempDir()
	cfg.Agents, cfg.Frameworks, cfg.Tasks = 30, 2, 40
	cfg.TaskDuration, cfg.Warmup, cfg.Duration, cfg.Kills = 2*time.Second, 30*time.Second, 8*time.Second, 1
	cfg.CatchUp = true
	cfg.Logger = testlog.New(t)
	t.Cleanup(func() {
		if t.Failed() {
			logMasters(t, cfg.Dir, cfg.Masters)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Write(&out)
	t.Log("\n" + out.String())
	if rep.Launched == 0 || rep.OfferToLaunch.N == 0 || rep.AcceptCall.N == 0 || rep.StatusUpdate.N == 0 || rep.Rounds == 0 || rep.Commits == 0 {
		t.Fatalf("nothing measured: %d launched, %d launch latencies, %d accept calls, %d update latencies, %d rounds, %d commits",
			rep.Launched, rep.OfferToLaunch.N, rep.AcceptCall.N, rep.StatusUpdate.N, rep.Rounds, rep.Commits)
	}
	if rep.OfferWait.N == 0 || rep.CallToAgent.N == 0 || rep.AgentsLag.N == 0 || rep.OfferToWire.N == 0 {
		t.Fatalf("offer to launch not split at the call: %d waits, %d calls to the agent, %d lag samples, %d launches heard", rep.OfferWait.N, rep.CallToAgent.N, rep.AgentsLag.N, rep.OfferToWire.N)
	}
	if c := rep.CatchUp; c == nil || c.Index == 0 || c.Took <= 0 {
		t.Fatalf("catch-up: %+v, want a follower that applied the leader's index", c)
	}
	if len(rep.Kills) != 1 || rep.Kills[0].ToLeader <= 0 || rep.Kills[0].ToOffer <= 0 {
		t.Fatalf("kills: %+v, want one with a new leader and an offer after it", rep.Kills)
	}
	ended := 0
	for state, n := range rep.Ended {
		if state != "FINISHED" && !strings.HasPrefix(state, "KILLED") {
			t.Errorf("%d tasks ended %s", n, state)
		}
		ended += n
	}
	if ended != rep.Launched || rep.NotEnded != 0 || rep.Conflicting != 0 {
		t.Fatalf("%d tasks launched, %d ended, %d never ended, %d ended two ways", rep.Launched, ended, rep.NotEnded, rep.Conflicting)
	}
	if rep.AgentsActive != cfg.Agents {
		t.Fatalf("%d agents active at the end, want %d", rep.AgentsActive, cfg.Agents)
	}
}

// logMasters puts the masters' logs in a failed test's output: the run's
// directory goes with the test.
func logMasters(t *testing.T, dir string, n int) {
	for i := range n {
		name := fmt.Sprintf("m%d.log", i)
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		t.Logf("%s:\n%s", name, data)
	}
}
