package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/protocol"
)

// fileWith is the shipped example's shape with one fragment swapped in:
// preemption settings, a role's extra fields, a leaf's extra fields.
func fileWith(preemption, role, leaf string) string {
	return `{"capacity": {"cpus": 12}, "agents": 3, "preemption": {` + preemption + `},
	  "root": {"name": "root", "children": [{"name": "eng", "children": [
	    {"name": "batch", "children": [{"name": "batch-fw", "demand": {"cpus": 1}, "tasks": 12}]},
	    {"name": "prod", "weight": 3` + role + `, "children": [
	      {"name": "prod-fw", "demand": {"cpus": 1}` + leaf + `}]}]}]}}`
}

func TestFile_Spec_badTimeline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in    string
		node, field string
	}{
		{"negative deadline", fileWith(`"deadline": -5`, "", ""), "", "preemption.deadline"},
		{"negative delay", fileWith(`"delay": -1`, "", ""), "", "preemption.delay"},
		{"zero interval", fileWith(`"interval": 0`, "", ""), "", "preemption.interval"},
		{"max fraction above one", fileWith(`"max_fraction": 1.5`, "", ""), "", "preemption.max_fraction"},
		{"unknown cluster policy", fileWith(`"policy": "always"`, "", ""), "", "preemption.policy"},
		{"unknown role policy", fileWith(``, `, "preemption": "sometimes"`, ""), "prod", "preemption"},
		{"negative arrival", fileWith(``, "", `, "arrival": -3`), "prod-fw", "arrival"},
		{"zero duration", fileWith(``, "", `, "duration": 0`), "prod-fw", "duration"},
		{"guarantee on a leaf", fileWith(``, "", `, "guarantee": {"cpus": 1}`), "prod-fw", "guarantee"},
		{"policy on a leaf", fileWith(``, "", `, "preemption": "fair"`), "prod-fw", "preemption"},
		{"arrival on a role", fileWith(``, `, "arrival": 4`, ""), "prod", "arrival"},
		{"guarantee of an unknown resource", fileWith(``, `, "guarantee": {"gpus": 1}`, ""), "prod", "guarantee"},
		{"negative guarantee", fileWith(``, `, "guarantee": {"cpus": -1}`, ""), "prod", "guarantee.cpus"},
		{"churn in a timeline", strings.Replace(fileWith(``, "", ""), `"agents": 3`,
			`"agents": 3, "churn": {"completions": 5, "seed": 1}`, 1), "", "churn"},
		{"zero until", strings.Replace(fileWith(``, "", ""), `"agents": 3`, `"agents": 3, "until": 0`, 1), "", "until"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := ParseFile(strings.NewReader(tc.in))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			_, err = f.Replay(offers.PolicyDynamic, "")
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FieldError", err)
			}
			if fe.Node != tc.node || fe.Field != tc.field {
				t.Errorf("got node %q field %q, want node %q field %q (%v)", fe.Node, fe.Field, tc.node, tc.field, err)
			}
			if !errors.Is(err, protocol.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q: want ErrInvalidArgument naming %s", err, tc.field)
			}
		})
	}
}

// The same checks hold for a spec built in Go.
func TestNew_badPreemption(t *testing.T) {
	t.Parallel()
	p := DefaultPreemption()
	p.Deadline = -time.Second
	spec := tree(res{"cpus": 1}, lf("a", res{"cpus": 1}))
	spec.Preemption = &p
	var fe *FieldError
	if _, err := New(spec, offers.PolicyDynamic); !errors.As(err, &fe) || fe.Field != "preemption.deadline" {
		t.Fatalf("got %v, want a FieldError on preemption.deadline", err)
	}
}

func TestParseFile_malformed(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{`, `{"capacity": {"cpus": 1}, "root": {}, "deadline": 3}`, `{} {}`,
		`{"preemption": {"deadline": "soon"}}`} {
		if _, err := ParseFile(strings.NewReader(in)); !errors.Is(err, ErrBadFile) {
			t.Errorf("%s: got %v, want ErrBadFile", in, err)
		}
	}
}

// Every shipped scenario without preemption fields reads as one without a
// timeline (the sim package replays it as before) and converts to a spec
// without one; the preemption example has one.
func TestFile_Timed_shippedScenarios(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("..", "..", "examples", "scenarios", "*.json"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("scenarios: %v, %v", paths, err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseFile(strings.NewReader(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		spec, err := f.Spec()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		wantTimed := filepath.Base(path) == "prod-arrives.json"
		if f.Timed() != wantTimed || spec.Timed() != wantTimed {
			t.Errorf("%s: file timed %v, spec timed %v; want %v", path, f.Timed(), spec.Timed(), wantTimed)
		}
	}
}
