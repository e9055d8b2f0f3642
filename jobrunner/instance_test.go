package jobrunner

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/jobs"
	"github.com/allot-project/allot/protocol"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func twoTasks(checked bool) *instance {
	in := &instance{Instance: jobs.Instance{Slot: jobs.Slot{Group: "g", Index: 0}, Version: 1, State: jobs.InstanceStarting},
		id: "web.g.0.v1.0", tasks: map[protocol.TaskID]protocol.TaskStatus{}, checked: map[protocol.TaskID]bool{}}
	in.taskIDs = []protocol.TaskID{taskID(in.id, "a"), taskID(in.id, "b")}
	in.checked[in.taskIDs[0]] = checked
	return in
}

func status(id protocol.TaskID, st protocol.TaskState, healthy *bool) protocol.TaskStatus {
	return protocol.TaskStatus{TaskID: id, AgentID: "ag-1", State: st, Healthy: healthy}
}

func TestInstance_observe(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	in := twoTasks(true)
	a, b := in.taskIDs[0], in.taskIDs[1]
	in.observe(status(a, protocol.TaskRunning, nil), t0)
	if in.State != jobs.InstanceStarting {
		t.Fatalf("one of two running: %s", in.State)
	}
	in.observe(status(b, protocol.TaskRunning, nil), t0)
	if in.State != jobs.InstanceRunning || in.Healthy {
		t.Fatalf("both running, a's check not passed yet: %s healthy %v", in.State, in.Healthy)
	}
	in.observe(status(a, protocol.TaskRunning, &yes), t0.Add(time.Second))
	if !in.Healthy || !in.HealthySince.Equal(t0.Add(time.Second)) {
		t.Fatalf("a's check passed: healthy %v since %v", in.Healthy, in.HealthySince)
	}
	in.observe(status(a, protocol.TaskRunning, &no), t0.Add(2*time.Second))
	if in.Healthy {
		t.Fatal("a's check failed: still healthy")
	}
	// One task fails: the other is to be killed, the instance ends when
	// both have, failed.
	kill := in.observe(status(a, protocol.TaskFailed, nil), t0.Add(3*time.Second))
	if !reflect.DeepEqual(kill, []protocol.TaskID{b}) || in.State.Ended() {
		t.Fatalf("a failed: kill %v, state %s", kill, in.State)
	}
	in.observe(status(b, protocol.TaskKilled, nil), t0.Add(4*time.Second))
	if in.State != jobs.InstanceFailed || !in.EndedAt.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("both ended: %s at %v", in.State, in.EndedAt)
	}
	// An end is final: a late RUNNING changes nothing.
	in.observe(status(a, protocol.TaskRunning, nil), t0.Add(5*time.Second))
	if in.State != jobs.InstanceFailed {
		t.Fatalf("after a late update: %s", in.State)
	}

	done := twoTasks(false)
	for _, id := range done.taskIDs {
		done.observe(status(id, protocol.TaskFinished, nil), t0)
	}
	if done.State != jobs.InstanceFinished {
		t.Fatalf("both finished: %s", done.State)
	}
	// Without a check, running is healthy.
	plain := twoTasks(false)
	for _, id := range plain.taskIDs {
		plain.observe(status(id, protocol.TaskRunning, nil), t0)
	}
	if !plain.Healthy {
		t.Fatal("running without checks: not healthy")
	}
}

func TestInstanceOf(t *testing.T) {
	t.Parallel()
	inst, task, ok := instanceOf("web.front-end.12.v3.4.server")
	if !ok || inst != "web.front-end.12.v3.4" || task != "server" {
		t.Errorf("got %q %q %v", inst, task, ok)
	}
	for _, bad := range []protocol.TaskID{"run-0", "a.b.c", "web.g.0.v1.0", "web.g.x.v1.0.t"} {
		if _, _, ok := instanceOf(bad); ok {
			t.Errorf("%q read as an instance's task", bad)
		}
	}
}

func TestAdmits_constraintsAndSpread(t *testing.T) {
	t.Parallel()
	g := &jobs.Group{Name: "g", Spread: []string{"rack"}, Constraints: []protocol.Constraint{
		{Attribute: "hostname", Op: protocol.OpUnique},
		{Attribute: "zone", Op: protocol.OpEq, Value: "z1"},
		{Attribute: "disk", Op: protocol.OpEq, Value: "ssd", Soft: true},
	}}
	attrs := func(host, rack, zone string) protocol.Attributes {
		return protocol.Attributes{"hostname": protocol.Text(host), "rack": protocol.Text(rack), "zone": protocol.Text(zone)}
	}
	placed := &instance{Instance: jobs.Instance{Slot: jobs.Slot{Group: "g", Index: 0}}, group: g, placed: true, attrs: attrs("h1", "r1", "z1")}
	ended := &instance{Instance: jobs.Instance{Slot: jobs.Slot{Group: "g", Index: 2}, State: jobs.InstanceFailed}, group: g, placed: true, attrs: attrs("h3", "r2", "z1")}
	in := &instance{Instance: jobs.Instance{Slot: jobs.Slot{Group: "g", Index: 1}}, group: g}
	peers := []*instance{placed, ended, in}
	for _, tc := range []struct {
		attrs protocol.Attributes
		want  bool
	}{
		{attrs("h1", "r1", "z1"), false}, // a second instance on h1
		{attrs("h2", "r1", "z2"), false}, // zone
		{attrs("h2", "r1", "z1"), true},
		{attrs("h3", "r2", "z1"), true}, // the ended instance holds nothing
	} {
		if got := admits(in, tc.attrs, peers); got != tc.want {
			t.Errorf("admits on %v: %v, want %v", tc.attrs, got, tc.want)
		}
	}
	if a, b := spreadLoad(in, attrs("h2", "r1", "z1"), peers), spreadLoad(in, attrs("h4", "r2", "z1"), peers); a != 1 || b != 0 {
		t.Errorf("spread load on r1 %d and r2 %d, want 1 and 0", a, b)
	}
}

func TestKeepInPlace_onlyCountChanged(t *testing.T) {
	t.Parallel()
	group := func(count int, cmd string) jobs.Group {
		return jobs.Group{Name: "g", Count: count, Tasks: []jobs.Task{{Name: "t", Command: cmd}}}
	}
	v1 := &jobs.Job{Name: "web", Type: jobs.Service, Groups: []jobs.Group{group(3, "serve")}}
	run := &instance{Instance: jobs.Instance{Slot: jobs.Slot{Group: "g"}, Version: 1, State: jobs.InstanceRunning}}
	jr := &jobRun{job: v1, spec: jobs.SpecRecord{Version: 1}, insts: map[string]*instance{"web.g.0.v1.0": run}}
	keepInPlace(jr, &jobs.Job{Name: "web", Type: jobs.Service, Groups: []jobs.Group{group(5, "serve")}}, 2, map[int]*jobs.Job{1: v1})
	if run.Version != 2 || !jr.liveDirty {
		t.Fatalf("a count change: instance at v%d", run.Version)
	}
	v2 := &jobs.Job{Name: "web", Type: jobs.Service, Groups: []jobs.Group{group(5, "serve")}}
	jr.job, jr.spec.Version = v2, 2
	keepInPlace(jr, &jobs.Job{Name: "web", Type: jobs.Service, Groups: []jobs.Group{group(5, "serve --fast")}}, 3, map[int]*jobs.Job{2: v2})
	if run.Version != 2 {
		t.Fatalf("a command change kept the instance: v%d", run.Version)
	}
	// A revert to the file the instance runs (v4 = v2) keeps it.
	keepInPlace(jr, &jobs.Job{Name: "web", Type: jobs.Service, Groups: []jobs.Group{group(5, "serve")}}, 4, map[int]*jobs.Job{2: v2})
	if run.Version != 4 {
		t.Fatalf("a revert to its own file replaced the instance: v%d", run.Version)
	}
	// A version no longer kept (nil in olds): replaced.
	keepInPlace(jr, &jobs.Job{Name: "web", Type: jobs.Service, Groups: []jobs.Group{group(5, "serve")}}, 5, map[int]*jobs.Job{})
	if run.Version != 4 {
		t.Fatalf("an instance of an unknown version kept: v%d", run.Version)
	}
}

// TestPrune: an ended instance is forgotten when a later attempt of its
// slot replaced it or the runner stopped it itself (its count lowered, its
// version replaced); one that ended on its own with nothing after it stays,
// to be restarted or shown failed, and so does one still stopping.
func TestPrune(t *testing.T) {
	t.Parallel()
	inst := func(index, attempt int, st jobs.InstanceState, stopping bool) *instance {
		return &instance{Instance: jobs.Instance{Slot: jobs.Slot{Group: "g", Index: index}, Attempt: attempt, State: st, Stopping: stopping}}
	}
	jr := &jobRun{insts: map[string]*instance{
		"replaced":        inst(0, 0, jobs.InstanceFailed, false),
		"its replacement": inst(0, 1, jobs.InstanceRunning, false),
		"stopped, ended":  inst(1, 0, jobs.InstanceFailed, true),
		"failed alone":    inst(2, 0, jobs.InstanceFailed, false),
		"stopping":        inst(3, 0, jobs.InstanceRunning, true),
	}}
	(&Runner{}).prune(jr)
	var kept []string
	for id := range jr.insts {
		kept = append(kept, id)
	}
	slices.Sort(kept)
	if want := []string{"failed alone", "its replacement", "stopping"}; !slices.Equal(kept, want) || !jr.liveDirty {
		t.Errorf("kept %v (dirty %v), want %v", kept, jr.liveDirty, want)
	}
}
