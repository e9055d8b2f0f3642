package pack

import (
	"errors"
	"strings"
	"testing"
)

func TestPack_ParseEmbeddedTrace(t *testing.T) {
	t.Parallel()
	nodes, err := LoadNodes("gpu")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1213 || GPUCapacity(nodes) != 6212*DeviceMilli {
		t.Fatalf("gpu nodes: %d nodes, %d milli-GPU; want 1213 nodes, 6212 GPUs", len(nodes), GPUCapacity(nodes))
	}
	all, err := LoadNodes("all")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1523 || GPUCapacity(all) != GPUCapacity(nodes) {
		t.Fatalf("all nodes: %d nodes, %d milli-GPU", len(all), GPUCapacity(all))
	}
	for _, name := range []string{"default", "gpuspec33"} {
		pods, err := LoadPods(name)
		if err != nil {
			t.Fatal(err)
		}
		var sharing, constrained int
		for i, p := range pods {
			if p.ID != i {
				t.Fatalf("%s: pod %d has ID %d", name, i, p.ID)
			}
			if p.Sharing() {
				sharing++
			}
			if len(p.Models) > 0 {
				constrained++
			}
		}
		if len(pods) != 8152 || sharing != 3078 {
			t.Errorf("%s: %d pods, %d sharing; want 8152 and 3078", name, len(pods), sharing)
		}
		if (name == "default") != (constrained == 0) {
			t.Errorf("%s: %d pods with a GPU model list", name, constrained)
		}
	}
}

func TestPack_ParsePods(t *testing.T) {
	t.Parallel()
	const in = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
a,6000,12288,1,460,,LS,Running,10,500,12
b,88000,327680,8,1000,V100M16|V100M32|V100M32,Burstable,Succeeded,20,900,20
c,4000,8192,0,0,,BE,Pending,30,45,
`
	pods, err := ParsePods(strings.NewReader(in), "pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 3 {
		t.Fatalf("%d pods", len(pods))
	}
	a, b, c := pods[0], pods[1], pods[2]
	if !a.Sharing() || a.GPURequest() != 460 || a.Created != 10 || a.Deleted != 500 || a.Scheduled != 12 {
		t.Errorf("a: %+v", a)
	}
	if b.Sharing() || b.GPURequest() != 8000 || len(b.Models) != 2 || !b.AllowsModel("V100M32") || b.AllowsModel("T4") {
		t.Errorf("b: %+v", b)
	}
	if c.NumGPU != 0 || c.GPURequest() != 0 || c.Scheduled != NoTime || c.Phase != "Pending" || c.ID != 2 {
		t.Errorf("c: %+v", c)
	}
}

func TestPack_ParseNodes(t *testing.T) {
	t.Parallel()
	nodes, err := ParseNodes(strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\nn1,32000,262144,0,\n"), "nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{{"n0", 96000, 393216, 8, "G2"}, {"n1", 32000, 262144, 0, ""}}
	if len(nodes) != 2 || nodes[0] != want[0] || nodes[1] != want[1] {
		t.Fatalf("nodes %+v, want %+v", nodes, want)
	}
}

// Bad input names the file, the line and the column.
func TestPack_ParseErrors(t *testing.T) {
	t.Parallel()
	const podHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	const nodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n"
	for _, tc := range []struct {
		name      string
		nodes     bool
		in        string
		line, col int
		contains  string
	}{
		{"empty", false, "", 1, 0, "empty file"},
		{"header", false, strings.Replace(podHeader, "num_gpu", "gpus", 1), 1, 4, `"gpus", want "num_gpu"`},
		{"not a number", false, podHeader + "a,1,1,1,500,,LS,Running,0,,\nb,1,1,x,500,,LS,Running,0,,\n", 3, 4, "(num_gpu)"},
		{"negative", false, podHeader + "a,-5,1,1,500,,LS,Running,0,,\n", 2, 2, "negative"},
		{"field count", false, podHeader + "a,1,1,1\n", 2, 0, "wrong number of fields"},
		{"partial multi-GPU", false, podHeader + "a,1,1,2,500,,LS,Running,0,,\n", 2, 5, "whole ones"},
		{"milli without GPU", false, podHeader + "a,1,1,0,300,,LS,Running,0,,\n", 2, 5, "num_gpu 0"},
		{"over one GPU", false, podHeader + "a,1,1,1,1500,,LS,Running,0,,\n", 2, 5, "more than one GPU"},
		{"empty model", false, podHeader + "a,1,1,1,500,T4||A10,LS,Running,0,,\n", 2, 6, "empty model"},
		{"bad time", false, podHeader + "a,1,1,1,500,,LS,Running,0,soon,\n", 2, 10, "(deletion_time)"},
		{"quote", false, podHeader + "a,1,1,1,500,,L\"S,Running,0,,\n", 2, 15, "bare"},
		{"no pods", false, podHeader, 1, 0, "no pods"},
		{"node without model", true, nodeHeader + "n0,1,1,2,\n", 2, 5, "needs a model"},
		{"node twice", true, nodeHeader + "n0,1,1,0,\nn0,1,1,0,\n", 3, 1, "twice"},
	} {
		var err error
		if tc.nodes {
			_, err = ParseNodes(strings.NewReader(tc.in), "x.csv")
		} else {
			_, err = ParsePods(strings.NewReader(tc.in), "x.csv")
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want a ParseError", tc.name, err)
			continue
		}
		if pe.File != "x.csv" || pe.Line != tc.line || pe.Column != tc.col || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: %q (line %d, column %d); want line %d, column %d, containing %q",
				tc.name, err, pe.Line, pe.Column, tc.line, tc.col, tc.contains)
		}
		if !strings.HasPrefix(err.Error(), "x.csv:") {
			t.Errorf("%s: %q does not start with the file name", tc.name, err)
		}
	}
}

func TestPack_LoadMissingFile(t *testing.T) {
	t.Parallel()
	if _, err := LoadPods("/nonexistent/pods.csv"); err == nil || !strings.Contains(err.Error(), "/nonexistent/pods.csv") {
		t.Fatalf("error %v, want one naming the file", err)
	}
}
