package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/allot-project/allot/sim/hdrf"
)

// runSimHDRF runs `allot sim hdrf` in process.
func runSimHDRF(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := simHDRFCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// A scenario without a timeline prints exactly what hdrf.Run gives, as
// before timelines existed.
func TestSimHDRF_UntimedOutputUnchanged(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../examples/scenarios/*.json")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`"preemption"`)) || bytes.Contains(data, []byte(`"until"`)) {
			continue
		}
		checked++
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			got, err := runSimHDRF(t, "--policy", "dynamic", "--scenario", path)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := hdrf.ParseScenario(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			res, err := hdrf.Run(sc, "dynamic")
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.MarshalIndent(res, "", "  ")
			if got != string(want)+"\n" {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d scenarios without a timeline, want the shipped ones", checked)
	}
}

// The shipped preemption example under each cluster policy: prod-fw ends
// with 0, 2 (its guarantee) and 9 (its fair share, 3:1 of 12) CPUs.
func TestSimHDRF_PreemptionExample(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pre  string
		prod int64
	}{{"off", 0}, {"guarantees", 2}, {"fair", 9}} {
		t.Run(tc.pre, func(t *testing.T) {
			t.Parallel()
			out, err := runSimHDRF(t, "--scenario", "../../examples/scenarios/prod-arrives.json", "--preemption", tc.pre)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Preemption struct {
					Policy string `json:"policy"`
				} `json:"preemption"`
				Nodes map[string]struct {
					Tasks int64 `json:"tasks"`
				} `json:"nodes"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out)
			}
			if rep.Preemption.Policy != tc.pre || rep.Nodes["prod-fw"].Tasks != tc.prod {
				t.Errorf("got policy %q and %d prod-fw tasks, want %q and %d",
					rep.Preemption.Policy, rep.Nodes["prod-fw"].Tasks, tc.pre, tc.prod)
			}
		})
	}
}

func TestSimHDRF_BadPreemptionFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, pre, want string
	}{
		{"unknown policy", "../../examples/scenarios/prod-arrives.json", "always", "preemption policy"},
		{"no timeline", "../../examples/scenarios/figure4.json", "fair", "needs a scenario with a timeline"},
	} {
		_, err := runSimHDRF(t, "--scenario", tc.path, "--preemption", tc.pre)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
