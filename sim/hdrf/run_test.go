package hdrf

import (
	"errors"
	"strings"
	"testing"
)

const figure4 = `{
  "capacity": {"cpus": 10, "gpus": 10},
  "root": {"name": "root", "children": [
    {"name": "n1", "children": [{"name": "n1.1", "demand": {"cpus": 1}}]},
    {"name": "n2", "children": [
      {"name": "n2.1", "demand": {"cpus": 1}},
      {"name": "n2.2", "demand": {"gpus": 1}}
    ]}
  ]},
  "churn": {"completions": 20000, "seed": 1}
}`

func runFigure4(t *testing.T, policy string) Result {
	t.Helper()
	sc, err := ParseScenario(strings.NewReader(figure4))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(sc, policy)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunHDRF_Figure4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		policy string
		want   map[string]int64
	}{
		{"static", map[string]int64{"n1.1": 5, "n2.1": 5, "n2.2": 10}},
		{"dynamic", map[string]int64{"n1.1": 5, "n2.1": 5, "n2.2": 10}},
		{"paper", map[string]int64{"n1.1": 5, "n2.1": 5, "n2.2": 10}},
		{"naive", map[string]int64{"n1.1": 10, "n2.1": 0, "n2.2": 10}},
		{"mesos", map[string]int64{"n1.1": 10, "n2.1": 0, "n2.2": 10}},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			t.Parallel()
			res := runFigure4(t, tc.policy)
			if res.Policy != tc.policy {
				t.Errorf("policy: got %q, want %q", res.Policy, tc.policy)
			}
			for leaf, want := range tc.want {
				if got := res.Leaves[leaf].Tasks; got != want {
					t.Errorf("%s tasks: got %d, want %d", leaf, got, want)
				}
			}
		})
	}
}

func TestRunHDRF_Figure4Shares(t *testing.T) {
	t.Parallel()
	res := runFigure4(t, "dynamic")
	want := map[string]map[string]float64{
		"n1.1": {"cpus": 0.5, "gpus": 0},
		"n2.1": {"cpus": 0.5, "gpus": 0},
		"n2.2": {"cpus": 0, "gpus": 1},
	}
	for leaf, shares := range want {
		for res_, w := range shares {
			if got := res.Leaves[leaf].Shares[res_]; got != w {
				t.Errorf("%s %s share: got %v, want %v", leaf, res_, got, w)
			}
		}
	}
}

func TestRunHDRF_FractionalDemand(t *testing.T) {
	t.Parallel()
	// docs/hdrf.md: n2,1 needs <1, 0.01>; dynamic keeps 50/50/99.
	in := `{"capacity": {"cpus": 100, "gpus": 100}, "root": {"name": "root", "children": [
	  {"name": "n1", "children": [{"name": "n1.1", "demand": {"cpus": 1}}]},
	  {"name": "n2", "children": [
	    {"name": "n2.1", "demand": {"cpus": 1, "gpus": 0.01}},
	    {"name": "n2.2", "demand": {"gpus": 1}}]}]}}`
	sc, err := ParseScenario(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(sc, "dynamic")
	if err != nil {
		t.Fatal(err)
	}
	for leaf, want := range map[string]int64{"n1.1": 50, "n2.1": 50, "n2.2": 99} {
		if got := res.Leaves[leaf].Tasks; got != want {
			t.Errorf("%s: got %d tasks, want %d", leaf, got, want)
		}
	}
}

func TestRunHDRF_BadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, policy, in string
	}{
		{"unknown policy", "fifo", figure4},
		{"malformed json", "dynamic", `{"capacity": {"cpus": 10}, "root": `},
		{"trailing data", "dynamic", figure4 + `{}`},
		{"unknown field", "dynamic", `{"capacity": {"cpus": 1}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 1}}]}, "extra": 1}`},
		{"leaf without demand", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a"}]}}`},
		{"negative capacity", "dynamic", `{"capacity": {"cpus": -1}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 1}}]}}`},
		{"negative demand", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": -1}}]}}`},
		{"negative tasks", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 1}, "tasks": -3}]}}`},
		{"negative weight", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "weight": -1, "demand": {"cpus": 1}}]}}`},
		{"negative churn", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 1}}]}, "churn": {"completions": -1}}`},
		{"unknown resource", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "demand": {"gpus": 1}}]}}`},
		{"zero demand", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 0}}]}}`},
		{"duplicate names", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 1}}, {"name": "a", "demand": {"cpus": 1}}]}}`},
		{"too many decimals", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 0.0001}}]}}`},
		{"empty root", "dynamic", `{"capacity": {"cpus": 10}, "root": {"name": "r"}}`},
		{"no capacity", "dynamic", `{"root": {"name": "r", "children": [{"name": "a", "demand": {"cpus": 1}}]}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc, err := ParseScenario(strings.NewReader(tc.in))
			if err == nil {
				_, err = Run(sc, tc.policy)
			}
			if err == nil {
				t.Fatal("got no error, want one")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestParseHDRFScenario_ErrBadScenario(t *testing.T) {
	t.Parallel()
	_, err := ParseScenario(strings.NewReader("not json"))
	if !errors.Is(err, ErrBadScenario) {
		t.Fatalf("got %v, want ErrBadScenario", err)
	}
}
