package main

import (
	"encoding/json"
	"strings"
	"testing"
)

type phoenixPct struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
}

// One run prints per-percentile response times of short, long,
// constrained and unconstrained jobs, and no hard-constraint violation.
func TestSimPhoenix_JSON(t *testing.T) {
	t.Parallel()
	out, errOut, code := runAllot(t, "", "sim", "phoenix", "--json", "--workers", "200", "--jobs", "400", "--trace", "cloudera")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Short         phoenixPct `json:"short"`
		Long          phoenixPct `json:"long"`
		Constrained   phoenixPct `json:"constrained"`
		Unconstrained phoenixPct `json:"unconstrained"`
		Violations    int        `json:"violations"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for name, p := range map[string]phoenixPct{"short": res.Short, "long": res.Long, "constrained": res.Constrained, "unconstrained": res.Unconstrained} {
		if p.N == 0 || p.P50 <= 0 || p.P50 > p.P90 || p.P90 > p.P99 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if res.Violations != 0 {
		t.Fatalf("%d hard-constraint violations", res.Violations)
	}
}

// --compare prints factors against the first scheduler, over --seeds.
func TestSimPhoenix_Compare(t *testing.T) {
	t.Parallel()
	out, errOut, code := runAllot(t, "", "sim", "phoenix", "--json", "--workers", "200", "--jobs", "400",
		"--trace", "yahoo", "--compare", "eagle-c,phoenix,hawk-c", "--seeds", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c struct {
		Seeds []uint64 `json:"seeds"`
		Rows  []struct {
			Scheduler   string `json:"scheduler"`
			ShortFactor struct {
				P99 float64 `json:"p99"`
			} `json:"short_factor"`
		} `json:"schedulers"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(c.Seeds) != 2 || len(c.Rows) != 3 || c.Rows[2].Scheduler != "hawk-c" {
		t.Fatalf("comparison %+v", c)
	}
	if c.Rows[0].ShortFactor.P99 != 1 || c.Rows[2].ShortFactor.P99 <= 0 {
		t.Fatalf("factors %+v", c.Rows)
	}
	table, errOut, code := runAllot(t, "", "sim", "phoenix", "--workers", "200", "--jobs", "400", "--compare", "eagle-c,phoenix")
	if code != 0 || !strings.Contains(table, "factor vs eagle-c") {
		t.Fatalf("table (exit %d, %s):\n%s", code, errOut, table)
	}
}

func TestSimPhoenix_BadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--trace", "nope"},
		{"--scheduler", "nope"},
		{"--seeds", "2"},
		{"--experiment", "a9", "--workers", "100", "--jobs", "10"},
		{"--experiment", "a1", "--compare", "eagle-c"},
	} {
		if _, _, code := runAllot(t, "", append([]string{"sim", "phoenix"}, args...)...); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}
