package main

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

type carbyneOut struct {
	Scheduler string `json:"scheduler"`
	Jobs      map[string]struct {
		JCT float64 `json:"jct"`
	} `json:"jobs"`
	AvgJCT   float64   `json:"avg_jct"`
	P95JCT   float64   `json:"p95_jct"`
	Makespan float64   `json:"makespan"`
	Jain     float64   `json:"jain"`
	Leftover []float64 `json:"leftover"`
}

func runCarbyneJSON(t *testing.T, args ...string) carbyneOut {
	t.Helper()
	out, errOut, code := runAllot(t, "", append([]string{"sim", "carbyne", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var res carbyneOut
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: output is not JSON: %v\n%s", args, err, out)
	}
	return res
}

func closeTo(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Figure 2 from the command line: strict DRF gives J1 2.1 and J2 2.0
// (average 2.05), Carbyne J1 2.1 and J2 1.0 (average 1.55), and Carbyne's
// leftover pool goes 0.50, 0.21, 0.
func TestSimCarbyne_Figure2(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scheduler string
		j1, j2    float64
		avg       float64
		leftover  []float64
	}{
		{"drf", 2.1, 2.0, 2.05, []float64{0.21}},
		{"carbyne", 2.1, 1.0, 1.55, []float64{0.5, 0.21, 0}},
	} {
		res := runCarbyneJSON(t, "--workload", "fig2", "--scheduler", tc.scheduler)
		if res.Scheduler != tc.scheduler {
			t.Errorf("scheduler: got %q, want %q", res.Scheduler, tc.scheduler)
		}
		if !closeTo(res.Jobs["J1"].JCT, tc.j1) || !closeTo(res.Jobs["J2"].JCT, tc.j2) || !closeTo(res.AvgJCT, tc.avg) {
			t.Errorf("%s: J1 %v, J2 %v, average %v; want %v, %v, %v", tc.scheduler,
				res.Jobs["J1"].JCT, res.Jobs["J2"].JCT, res.AvgJCT, tc.j1, tc.j2, tc.avg)
		}
		if !reflect.DeepEqual(res.Leftover, tc.leftover) {
			t.Errorf("%s: leftover %v, want %v", tc.scheduler, res.Leftover, tc.leftover)
		}
	}
	out, errOut, code := runAllot(t, "", "sim", "carbyne", "--workload", "fig2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"average JCT 1.55 s", "leftover pool in the first round: 0.5 -> 0.21 -> 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSimCarbyne_Compare(t *testing.T) {
	t.Parallel()
	out, errOut, code := runAllot(t, "", "sim", "carbyne", "--workload", "fig2", "--compare", "drf,drf-wc,carbyne", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c struct {
		Rows []struct {
			Scheduler string  `json:"scheduler"`
			AvgFactor float64 `json:"avg_jct_factor"`
		} `json:"schedulers"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]float64{"drf": 1, "drf-wc": 2.05 / 1.55, "carbyne": 2.05 / 1.55}
	if len(c.Rows) != 3 {
		t.Fatalf("got %d rows, want 3", len(c.Rows))
	}
	for _, r := range c.Rows {
		if !closeTo(r.AvgFactor, want[r.Scheduler]) {
			t.Errorf("%s: average JCT factor %v, want %v", r.Scheduler, r.AvgFactor, want[r.Scheduler])
		}
	}
}

// A small tpcds sweep runs end to end and prints one comparison per value.
func TestSimCarbyne_Sweep(t *testing.T) {
	t.Parallel()
	out, errOut, code := runAllot(t, "", "sim", "carbyne", "--jobs", "4", "--machines", "2", "--seed", "3",
		"--compare", "drf,carbyne", "--sweep", "altruism=0,1", "--seeds", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var cs []struct {
		Sweep string   `json:"sweep"`
		Value float64  `json:"value"`
		Seeds []uint64 `json:"seeds"`
		Rows  []struct {
			AvgJCT float64 `json:"avg_jct"`
		} `json:"schedulers"`
	}
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(cs) != 2 || cs[1].Sweep != "altruism" || cs[1].Value != 1 || !reflect.DeepEqual(cs[0].Seeds, []uint64{3, 4}) {
		t.Fatalf("got %+v", cs)
	}
	for _, c := range cs {
		if len(c.Rows) != 2 || c.Rows[0].AvgJCT <= 0 || c.Rows[1].AvgJCT <= 0 {
			t.Errorf("altruism %v: rows %+v", c.Value, c.Rows)
		}
	}
}

func TestSimCarbyne_BadInputExitsNonZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--scheduler", "fifo"},
		{"--workload", "tpch"},
		{"--arrivals", "sometimes"},
		{"--altruism", "2"},
		{"--share-cap", "everything"},
		{"--sweep", "altruism=0,1"},
		{"--compare", "drf,carbyne", "--sweep", "weather=1"},
		{"--compare", "drf,carbyne", "--sweep", "altruism=x"},
		{"--compare", "drf", "--seeds", "0"},
		{"extra"},
	} {
		_, errOut, code := runAllot(t, "", append([]string{"sim", "carbyne", "--workload", "fig2"}, args...)...)
		if code == 0 {
			t.Errorf("%v: exit 0, want non-zero", args)
		}
		if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 || errOut == "" {
			t.Errorf("%v: got %d lines on stderr, want one: %q", args, lines, errOut)
		}
	}
}
