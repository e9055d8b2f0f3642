package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/allot-project/allot/framework/dag"
	"github.com/allot-project/allot/protocol"
)

func TestParseTaskID(t *testing.T) {
	t.Parallel()
	ref := dag.TaskRef{Job: "wordcount-1", Stage: stageMap, Index: 3, Attempt: 2}
	key, attempt, ok := parseTaskID(ref.TaskID())
	if !ok || key != (taskKey{job: "wordcount-1", stage: stageMap, index: 3}) || attempt != 2 {
		t.Errorf("parseTaskID(%s) = %+v, %d, %v", ref.TaskID(), key, attempt, ok)
	}
	for _, bad := range []protocol.TaskID{"helper", "a.b.c", "a.b.x.1", "a.b.1.y", "a.b.1.2.3"} {
		if _, _, ok := parseTaskID(bad); ok {
			t.Errorf("parseTaskID(%s): ok", bad)
		}
	}
}

func newTestFramework(t *testing.T) *roleFramework {
	t.Helper()
	demand := protocol.Scalars(map[string]int64{protocol.ResCPUs: 500, protocol.ResMem: 64})
	out := &printer{w: io.Discard}
	f, err := newRoleFramework("analytics", "/bin/mapreduce", demand, out, newProgress(out, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.id = "fw-1"
	f.addrs = map[protocol.AgentID]string{"ag-a": "10.0.0.1:5051", "ag-b": "10.0.0.2:5051"}
	return f
}

// TestRoleFramework_LatestAttempt: statuses come at least once, and an
// attempt thought lost may still report FINISHED after a later one did;
// the reducers read the latest finished attempt's output.
func TestRoleFramework_LatestAttempt(t *testing.T) {
	t.Parallel()
	f := newTestFramework(t)
	j := &runJob{spec: jobSpec{ID: "wordcount-1", Kind: wordCount, Size: 1 << 20, Maps: 2, Reducers: 1},
		src: source{kind: wordCount, seed: 1, size: 1 << 20}}
	f.dagJob(j)
	fin := func(job string, stage string, index, attempt int, agent protocol.AgentID) {
		id := dag.TaskRef{Job: job, Stage: stage, Index: index, Attempt: attempt}.TaskID()
		f.finished(protocol.TaskStatus{TaskID: id, AgentID: agent, State: protocol.TaskFinished})
	}
	fin("wordcount-1", stageMap, 0, 1, "ag-a")
	fin("wordcount-1", stageMap, 1, 2, "ag-b")
	fin("wordcount-1", stageMap, 1, 1, "ag-a") // late, from an attempt given up on
	fin("wordcount-1", stageMap, 1, 2, "ag-b") // again
	if got, sandbox, ok := f.output("wordcount-1", stageMap, 1); !ok || got.attempt != 2 || got.addr != "10.0.0.2:5051" ||
		sandbox != "fw-1_wordcount-1.map.1.2" {
		t.Errorf("map 1: %+v in %s, %v; want attempt 2 on ag-b", got, sandbox, ok)
	}
	if n := f.mapAgents("wordcount-1"); n != 2 {
		t.Errorf("maps on %d agents, want 2", n)
	}
	task := f.task(j, dag.TaskRef{Job: "wordcount-1", Stage: stageReduce, Index: 0, Attempt: 1})
	args := task.Command.Args
	if task.Command.Value != "/bin/mapreduce" || args[0] != "reduce" {
		t.Fatalf("reduce task runs %s %q", task.Command.Value, args)
	}
	want := []string{"--from", "10.0.0.1:5051/fw-1_wordcount-1.map.0.1", "--from", "10.0.0.2:5051/fw-1_wordcount-1.map.1.2"}
	if !slices.Equal(args[len(args)-4:], want) {
		t.Errorf("reduce args %q, want them to end in %q", args, want)
	}
	mapTask := f.task(j, dag.TaskRef{Job: "wordcount-1", Stage: stageMap, Index: 1, Attempt: 3})
	if got := strings.Join(mapTask.Command.Args, " "); !strings.Contains(got, "--split 1 --splits 2") || !strings.Contains(got, "--seed 1") {
		t.Errorf("map task args %q", got)
	}
}
