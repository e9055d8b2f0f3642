package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePackInput writes a node list of two one-GPU nodes and a workload of
// three one-GPU pods: whatever the order, two are placed and one fails.
func writePackInput(t *testing.T) (nodes, pods string) {
	t.Helper()
	dir := t.TempDir()
	nodes = filepath.Join(dir, "nodes.csv")
	pods = filepath.Join(dir, "pods.csv")
	const nodeList = "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,32768,1,T4\nn1,8000,32768,1,T4\n"
	const podList = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"a,4000,8192,1,1000,,LS,Running,0,100,0\n" +
		"b,4000,8192,1,1000,T4,LS,Running,10,60,10\n" +
		"c,4000,8192,1,1000,,BE,Running,20,40,20\n"
	if err := os.WriteFile(nodes, []byte(nodeList), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pods, []byte(podList), 0o600); err != nil {
		t.Fatal(err)
	}
	return nodes, pods
}

// Fill mode: 3 pods on 2 GPUs arrive at 50%, 100% and 150% of capacity; the
// first two are placed, so the allocation is 100% at 100% arrived and the
// first lost point comes with the third, at 150%.
func TestSimPack_FillJSON(t *testing.T) {
	t.Parallel()
	nodes, pods := writePackInput(t)
	out, errOut, code := runAllot(t, "", "sim", "pack", "--json", "--nodes", nodes, "--pods", pods,
		"--seeds", "2", "--policies", "fgd,first-fit")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Mode      string   `json:"mode"`
		NodeCount int      `json:"node_count"`
		GPUs      float64  `json:"gpus"`
		TracePods int      `json:"trace_pods"`
		Seeds     []uint64 `json:"seeds"`
		Policies  []struct {
			Policy      string  `json:"policy"`
			AllocAt100  float64 `json:"alloc_at_100"`
			FirstLossAt float64 `json:"first_loss_at"`
			Failed      float64 `json:"failed"`
			Curve       []struct {
				Arrived   float64 `json:"arrived"`
				Allocated float64 `json:"allocated"`
			} `json:"curve"`
			Runs []struct {
				Seed uint64 `json:"seed"`
			} `json:"runs"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if r.Mode != "fill" || r.NodeCount != 2 || r.GPUs != 2 || r.TracePods != 3 || len(r.Seeds) != 2 || len(r.Policies) != 2 {
		t.Fatalf("report %s", out)
	}
	for i, want := range []string{"fgd", "first-fit"} {
		p := r.Policies[i]
		if p.Policy != want || p.AllocAt100 != 1 || p.FirstLossAt != 1.5 || p.Failed != 1 || len(p.Runs) != 2 {
			t.Errorf("policy %d: %+v, want %s at 100%% / 150%%", i, p, want)
		}
		if len(p.Curve) != 13 || p.Curve[4].Arrived != 0.5 || p.Curve[4].Allocated != 0.5 || p.Curve[5].Allocated != 1 || p.Curve[12].Allocated != 1 {
			t.Errorf("%s: curve %+v", p.Policy, p.Curve)
		}
	}
}

// Replay mode and the text tables.
func TestSimPack_ReplayAndTables(t *testing.T) {
	t.Parallel()
	nodes, pods := writePackInput(t)
	out, errOut, code := runAllot(t, "", "sim", "pack", "--mode", "replay", "--json", "--nodes", nodes, "--pods", pods,
		"--seeds", "1", "--policies", "best-fit", "--speedup", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Mode     string `json:"mode"`
		Policies []struct {
			Policy      string  `json:"policy"`
			Waited      float64 `json:"waited"`
			MeanWait    float64 `json:"mean_wait_s"`
			NeverPlaced float64 `json:"never_placed"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	// c arrives at 20 to two busy GPUs and waits until b leaves at 60.
	if r.Mode != "replay" || len(r.Policies) != 1 || r.Policies[0].Waited != 1 || r.Policies[0].MeanWait != 40 || r.Policies[0].NeverPlaced != 0 {
		t.Fatalf("replay %s", out)
	}
	table, errOut, code := runAllot(t, "", "sim", "pack", "--nodes", nodes, "--pods", pods, "--seeds", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"GPU alloc at 100% arrived", "first-fit", "best-fit", "random", "fgd", "100.00%", "150.0%"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestSimPack_BadInput(t *testing.T) {
	t.Parallel()
	nodes, _ := writePackInput(t)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\na,1,1,two,1000,,LS,Running,0,,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pods", bad, "--nodes", nodes}, "bad.csv:2: column 4 (num_gpu)"},
		{[]string{"--policies", "worst-fit"}, "unknown policy"},
		{[]string{"--mode", "later"}, "want fill or replay"},
		{[]string{"--seeds", "0"}, "at least 1"},
		{[]string{"--nodes", "/nonexistent/nodes.csv"}, "/nonexistent/nodes.csv"},
	} {
		_, errOut, code := runAllot(t, "", append([]string{"sim", "pack"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, errOut, tc.want)
		}
	}
}
