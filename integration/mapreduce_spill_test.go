package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/allot-project/allot/internal/testcluster"
)

// mapReduceReport is the part of `mapreduce run --json` the tests read.
type mapReduceReport struct {
	Jobs []struct {
		ID             string `json:"id"`
		Finished       bool   `json:"finished"`
		FailedAttempts int    `json:"failed_attempts"`
		Verified       bool   `json:"verified"`
		Stages         []struct {
			Name     string `json:"name"`
			Tasks    int    `json:"tasks"`
			Counters struct {
				RecordsIn    int64 `json:"records_in"`
				RecordsOut   int64 `json:"records_out"`
				Spills       int   `json:"spills"`
				SpilledBytes int64 `json:"spilled_bytes"`
				PeakRSS      int64 `json:"peak_rss_bytes"`
				AgentPeak    int64 `json:"agent_peak_memory_bytes"`
				MemoryLimit  int64 `json:"memory_limit_bytes"`
			} `json:"counters"`
		} `json:"stages"`
	} `json:"jobs"`
}

func readMapReduceReport(t *testing.T, path string) mapReduceReport {
	t.Helper()
	data, err := os.ReadFile(path)
	var rep mapReduceReport
	if err == nil {
		err = json.Unmarshal(data, &rep)
	}
	if err != nil {
		t.Fatalf("--json report: %v", err)
	}
	return rep
}

// TestMapReduce_SpillsWithinMemory runs a word count and a sort of 24 MB
// each with tasks of 24 MiB, which a map can only manage by spilling its
// output to disk: both jobs verify, no task attempt failed (the agents
// kill a task over its memory and report it FAILED), every task's peak
// memory stayed within its request, both as the task reported its own
// and as its agent measured it and reported it in its final status, and the
// outputs are in the output directory with _SUCCESS, one file per
// reducer. The worker is built without the race detector, whose shadow
// memory would count against the tasks' memory.
func TestMapReduce_SpillsWithinMemory(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 1})
	mapReduceAgents(t, c)
	out, report := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "report.json")
	r := startMapReduceBinary(t, c, exampleBinaryNoRace(t, "mapreduce"),
		"--jobs", "wordcount:24MB@analytics,sort:24MB@batch", "--split-size", "12MB", "--reducers", "2",
		"--cpus", "1000", "--mem", "24", "--output", out, "--json", report)
	checkVerified(t, r.wait(t), "wordcount-1", "sort-2")
	rep := readMapReduceReport(t, report)
	if len(rep.Jobs) != 2 {
		t.Fatalf("report of %d jobs, want 2", len(rep.Jobs))
	}
	for _, j := range rep.Jobs {
		if !j.Finished || !j.Verified || j.FailedAttempts != 0 || len(j.Stages) != 2 {
			t.Errorf("job %s: finished %v, verified %v, %d failed attempts, %d stages; want finished and verified, none failed, 2 stages",
				j.ID, j.Finished, j.Verified, j.FailedAttempts, len(j.Stages))
			continue
		}
		maps, reduces := j.Stages[0].Counters, j.Stages[1].Counters
		if maps.Spills < 2 || maps.SpilledBytes == 0 {
			t.Errorf("job %s: maps spilled %d times (%d bytes); want each of the 2 maps to spill", j.ID, maps.Spills, maps.SpilledBytes)
		}
		if maps.RecordsOut != reduces.RecordsIn {
			t.Errorf("job %s: maps wrote %d records, reducers read %d", j.ID, maps.RecordsOut, reduces.RecordsIn)
		}
		for _, st := range j.Stages {
			c := st.Counters
			if c.PeakRSS == 0 || c.MemoryLimit != 24<<20 || c.PeakRSS > c.MemoryLimit {
				t.Errorf("job %s %s: peak memory %d bytes of a request of %d", j.ID, st.Name, c.PeakRSS, c.MemoryLimit)
			}
			if c.AgentPeak == 0 || c.AgentPeak > c.MemoryLimit {
				t.Errorf("job %s %s: the agents report a peak of %d bytes, of a request of %d", j.ID, st.Name, c.AgentPeak, c.MemoryLimit)
			}
		}
		dir := filepath.Join(out, j.ID)
		for _, name := range []string{"_SUCCESS", "part-r-00000", "part-r-00001"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("job %s output: %v", j.ID, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "_temporary")); !os.IsNotExist(err) {
			t.Errorf("job %s output: _temporary left behind (%v)", j.ID, err)
		}
	}
}
