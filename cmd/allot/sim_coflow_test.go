package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// tinyTrace is coflow's threeCoflows in the per-flow format (bytes), on 1 Gbps
// ports: A at t=0 (0→2 4 MB, 1→3 2 MB), B at 1 s (0→3 1 MB), C at 2 s
// (1→2 2 MB). At 125 MB/s a MB (2^20 bytes) takes 8.388608 ms.
const tinyTrace = `4 3
A 0 2 0 1 2 2 4194304 0 3 0 2097152
B 1000 1 0 1 3 1048576
C 2000 1 1 1 2 2097152
`

type coflowOut struct {
	Policy  string `json:"policy"`
	Coflows map[string]struct {
		CCTms float64 `json:"cct_ms"`
	} `json:"coflows"`
	Avg float64 `json:"avg_cct_ms"`
	P50 float64 `json:"p50_cct_ms"`
	P90 float64 `json:"p90_cct_ms"`
	P99 float64 `json:"p99_cct_ms"`
}

func TestSimCoflow_JSON(t *testing.T) {
	t.Parallel()
	// The coflows never overlap at 1 Gbps: each CCT is its bottleneck.
	const ms = 1e3 / 125e6 * (1 << 20)
	out, errOut, code := runAllot(t, tinyTrace, "sim", "coflow", "--trace", "-", "--policy", "fifo", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res coflowOut
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	want := map[string]float64{"A": 4 * ms, "B": ms, "C": 2 * ms}
	if res.Policy != "fifo" || len(res.Coflows) != 3 {
		t.Fatalf("policy %q with %d coflows, want fifo with 3", res.Policy, len(res.Coflows))
	}
	for id, w := range want {
		if got := res.Coflows[id].CCTms; math.Abs(got-w) > 1e-6 {
			t.Errorf("CCT(%s) = %v ms, want %v", id, got, w)
		}
	}
	if math.Abs(res.Avg-7*ms/3) > 1e-6 || math.Abs(res.P50-2*ms) > 1e-6 || math.Abs(res.P90-4*ms) > 1e-6 ||
		math.Abs(res.P99-4*ms) > 1e-6 {
		t.Errorf("avg %v, p50 %v, p90 %v, p99 %v; want %v, %v, %v, %v", res.Avg, res.P50, res.P90, res.P99,
			7*ms/3, 2*ms, 4*ms, 4*ms)
	}
	table, errOut, code := runAllot(t, tinyTrace, "sim", "coflow", "--trace", "-")
	if code != 0 || !strings.Contains(table, "policy philae, 3 coflows") || !strings.Contains(table, "agents sent updates") {
		t.Errorf("table (exit %d, %s):\n%s", code, errOut, table)
	}
}

func TestSimCoflow_Compare(t *testing.T) {
	t.Parallel()
	// Squeeze the ports to 1 MB/s (coflow's hand case): FIFO gives 4, 4, 4 s
	// and SCF 7, 1, 2 s, so FIFO's speedup over SCF is (10/3)/4 on average.
	args := []string{"sim", "coflow", "--trace", "-", "--gbps", "0.008388608", "--compare", "fifo,scf"}
	out, errOut, code := runAllot(t, tinyTrace, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Rows []struct {
			Policy    string  `json:"policy"`
			AvgCCTms  float64 `json:"avg_cct_ms"`
			AvgFactor float64 `json:"avg_factor"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if len(res.Rows) != 2 || res.Rows[0].Policy != "fifo" || res.Rows[0].AvgFactor != 1 ||
		math.Abs(res.Rows[1].AvgFactor-(10.0/3)/4) > 1e-9 || math.Abs(res.Rows[0].AvgCCTms-4000) > 1e-6 {
		t.Errorf("rows %+v, want fifo (4000 ms, 1) then scf (%v)", res.Rows, (10.0/3)/4)
	}
	table, errOut, code := runAllot(t, tinyTrace, args...)
	if code != 0 || !strings.Contains(table, "fifo's speedup over each policy") || !strings.Contains(table, "scf") {
		t.Errorf("table (exit %d, %s):\n%s", code, errOut, table)
	}
	sweep, errOut, code := runAllot(t, tinyTrace, append(args, "--sweep", "thin-limit=0,7")...)
	if code != 0 || !strings.Contains(sweep, "thin-limit") {
		t.Errorf("sweep (exit %d, %s):\n%s", code, errOut, sweep)
	}
}

func TestSimCoflow_BadInputExitsNonZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"no trace", "", []string{"sim", "coflow"}},
		{"missing file", "", []string{"sim", "coflow", "--trace", "/nonexistent/trace.txt"}},
		{"malformed trace", "4 1\n1 0 1 9 1 1:1\n", []string{"sim", "coflow", "--trace", "-"}},
		{"unknown policy", tinyTrace, []string{"sim", "coflow", "--trace", "-", "--policy", "sjf"}},
		{"unknown in compare", tinyTrace, []string{"sim", "coflow", "--trace", "-", "--compare", "philae,sjf"}},
		{"sweep without compare", tinyTrace, []string{"sim", "coflow", "--trace", "-", "--sweep", "skew=1"}},
		{"bad sweep knob", tinyTrace, []string{"sim", "coflow", "--trace", "-", "--compare", "fifo", "--sweep", "colour=1"}},
		{"bad pilot fraction", tinyTrace, []string{"sim", "coflow", "--trace", "-", "--pilot-fraction", "2"}},
		{"nothing left", tinyTrace, []string{"sim", "coflow", "--trace", "-", "--wide", "7"}},
	} {
		_, errOut, code := runAllot(t, tc.stdin, tc.args...)
		if code == 0 {
			t.Errorf("%s: exit 0, want non-zero", tc.name)
		}
		if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 || errOut == "" {
			t.Errorf("%s: got %d lines on stderr, want one: %q", tc.name, lines, errOut)
		}
	}
}
