package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/allot-project/allot/offers"
)

// File is a scenario file of `allot sim hdrf` (docs/hdrf.md). A file
// without a timeline (no preemption, until, arrival, duration, guarantee
// or preemption policy on a role) is what the sim package replays with
// Fill and Churn; one with a timeline is replayed by File.Replay.
//
// Quantities may carry up to three decimals (a demand of 0.01 GPUs, say);
// they are replayed in thousandths so that every amount is an integer.
// Times are in seconds.
type File struct {
	Capacity map[string]float64 `json:"capacity"`
	Root     FileNode           `json:"root"`
	// Churn asks for random completions after the first fill; it has no
	// place in a timeline.
	Churn *FileChurn `json:"churn,omitempty"`
	// Agents splits the capacity over this many equal agents (default 1).
	Agents int `json:"agents,omitempty"`
	// Preemption configures the replay's preemption; a field left out
	// takes the master's default (DefaultPreemption).
	Preemption *FilePreemption `json:"preemption,omitempty"`
	// Until ends the replay; without it the replay runs until nothing more
	// can happen.
	Until *float64 `json:"until,omitempty"`
}

// FileNode is a node of the scenario tree; a node without children is a
// leaf and must have a demand.
type FileNode struct {
	Name     string             `json:"name"`
	Weight   *float64           `json:"weight,omitempty"`
	Children []FileNode         `json:"children,omitempty"`
	Demand   map[string]float64 `json:"demand,omitempty"`
	// Tasks is the leaf's total number of tasks (default unlimited).
	Tasks *int64 `json:"tasks,omitempty"`
	// Arrival is when a leaf's framework arrives (default 0).
	Arrival *float64 `json:"arrival,omitempty"`
	// Duration is how long each of a leaf's tasks runs; left out, a task
	// runs until it is killed.
	Duration *float64 `json:"duration,omitempty"`
	// Guarantee is a role's guarantee, from the first arrival under it.
	Guarantee map[string]float64 `json:"guarantee,omitempty"`
	// Preemption is a role's own policy: off, guarantees or fair.
	Preemption string `json:"preemption,omitempty"`
}

// FileChurn asks for random task completions after the first fill.
type FileChurn struct {
	Completions int    `json:"completions"`
	Seed        uint64 `json:"seed"`
}

// FilePreemption is the file's preemption settings, times in seconds.
type FilePreemption struct {
	Policy      string   `json:"policy,omitempty"`
	Interval    *float64 `json:"interval,omitempty"`
	Delay       *float64 `json:"delay,omitempty"`
	Deadline    *float64 `json:"deadline,omitempty"`
	MaxFraction *float64 `json:"max_fraction,omitempty"`
}

// ErrBadFile reports a scenario file that cannot be read.
var ErrBadFile = errors.New("bad scenario file")

// unitScale is how many replay units make one file unit.
const unitScale = 1000

// ParseFile reads a scenario file strictly: unknown fields and trailing
// data are errors.
func ParseFile(r io.Reader) (File, error) {
	var f File
	data, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return f, fmt.Errorf("%w: read: %v", ErrBadFile, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%w: malformed JSON: %v", ErrBadFile, err)
	}
	if dec.More() {
		return f, fmt.Errorf("%w: trailing data after the scenario", ErrBadFile)
	}
	return f, nil
}

// Timed reports whether the file has a timeline.
func (f File) Timed() bool {
	return f.Preemption != nil || f.Until != nil || fileNodeTimed(f.Root)
}

func fileNodeTimed(n FileNode) bool {
	if n.Arrival != nil || n.Duration != nil || n.Guarantee != nil || n.Preemption != "" {
		return true
	}
	for _, c := range n.Children {
		if fileNodeTimed(c) {
			return true
		}
	}
	return false
}

// Replay replays the file's timeline under an allocation policy; a
// non-empty preemption replaces the file's cluster policy.
func (f File) Replay(policy offers.Policy, preemption offers.PreemptionPolicy) (Report, error) {
	spec, err := f.Spec()
	if err != nil {
		return Report{}, err
	}
	if preemption != "" {
		if spec.Preemption == nil {
			d := DefaultPreemption()
			spec.Preemption = &d
		}
		spec.Preemption.Policy = preemption
	}
	return replay(spec, policy, unitScale)
}

// Spec converts the file to the replayer's integer form.
func (f File) Spec() (Spec, error) {
	spec := Spec{Capacity: map[string]int64{}, Agents: f.Agents}
	if f.Agents < 0 {
		return spec, &FieldError{Field: "agents", Reason: fmt.Sprintf("must not be negative, got %d", f.Agents)}
	}
	if f.Churn != nil && f.Timed() {
		return spec, &FieldError{Field: "churn", Reason: "random completions have no place in a timeline (use durations)"}
	}
	for name, v := range f.Capacity {
		n, err := fileUnits("", "capacity."+name, v)
		if err != nil {
			return spec, err
		}
		spec.Capacity[name] = n
	}
	if f.Preemption != nil {
		p, err := f.Preemption.convert()
		if err != nil {
			return spec, err
		}
		spec.Preemption = &p
	}
	if f.Until != nil {
		d, err := fileSeconds("", "until", *f.Until)
		if err != nil {
			return spec, err
		}
		if d <= 0 {
			return spec, &FieldError{Field: "until", Reason: fmt.Sprintf("must be positive, got %v", *f.Until)}
		}
		spec.Until = d
	}
	root, err := f.Root.convert(true)
	if err != nil {
		return spec, err
	}
	spec.Root = root
	return spec, nil
}

func (p FilePreemption) convert() (Preemption, error) {
	out := DefaultPreemption()
	if p.Policy != "" {
		out.Policy = offers.PreemptionPolicy(p.Policy)
	}
	for _, d := range []struct {
		name string
		v    *float64
		to   *time.Duration
	}{{"interval", p.Interval, &out.Interval}, {"delay", p.Delay, &out.Delay}, {"deadline", p.Deadline, &out.Deadline}} {
		if d.v == nil {
			continue
		}
		v, err := fileSeconds("", "preemption."+d.name, *d.v)
		if err != nil {
			return out, err
		}
		*d.to = v
	}
	if p.MaxFraction != nil {
		out.MaxFraction = *p.MaxFraction
	}
	return out, out.validate()
}

func (n FileNode) convert(isRoot bool) (Node, error) {
	out := Node{Name: n.Name, Tasks: offers.Unlimited, Preemption: offers.PreemptionPolicy(n.Preemption)}
	if n.Weight != nil {
		if !(*n.Weight > 0) || math.IsInf(*n.Weight, 0) {
			return out, &FieldError{Node: n.Name, Field: "weight", Reason: fmt.Sprintf("must be positive, got %v", *n.Weight)}
		}
		out.Weight = *n.Weight
	}
	if n.Tasks != nil {
		out.Tasks = *n.Tasks // New refuses a negative count
	}
	for _, t := range []struct {
		name string
		v    *float64
		to   *time.Duration
	}{{"arrival", n.Arrival, &out.Arrival}, {"duration", n.Duration, &out.Duration}} {
		if t.v == nil {
			continue
		}
		d, err := fileSeconds(n.Name, t.name, *t.v)
		if err != nil {
			return out, err
		}
		if t.name == "duration" && d <= 0 {
			return out, &FieldError{Node: n.Name, Field: "duration", Reason: fmt.Sprintf("must be positive (leave it out for a task that runs until killed), got %v", *t.v)}
		}
		*t.to = d
	}
	var err error
	if out.Guarantee, err = amounts(n.Name, "guarantee", n.Guarantee); err != nil {
		return out, err
	}
	if len(n.Children) == 0 && !isRoot {
		if len(n.Demand) == 0 {
			return out, &FieldError{Node: n.Name, Field: "demand", Reason: "a leaf must have one"}
		}
		out.Demand, err = amounts(n.Name, "demand", n.Demand)
		return out, err
	}
	if len(n.Demand) > 0 {
		return out, &FieldError{Node: n.Name, Field: "demand", Reason: "a node with children has none"}
	}
	for _, c := range n.Children {
		cn, err := c.convert(false)
		if err != nil {
			return out, err
		}
		out.Children = append(out.Children, cn)
	}
	return out, nil
}

func amounts(node, field string, in map[string]float64) (map[string]int64, error) {
	if in == nil {
		return nil, nil
	}
	out := make(map[string]int64, len(in))
	for name, v := range in {
		u, err := fileUnits(node, field+"."+name, v)
		if err != nil {
			return nil, err
		}
		out[name] = u
	}
	return out, nil
}

// fileUnits converts a quantity to thousandths.
func fileUnits(node, field string, v float64) (int64, error) {
	if v < 0 || math.IsNaN(v) || v > 1e12 {
		return 0, &FieldError{Node: node, Field: field, Reason: fmt.Sprintf("must be between 0 and 1e12, got %v", v)}
	}
	u := math.Round(v * unitScale)
	if math.Abs(u-v*unitScale) > 1e-6*math.Max(1, u) {
		return 0, &FieldError{Node: node, Field: field, Reason: fmt.Sprintf("has more than three decimals (%v)", v)}
	}
	return int64(u), nil
}

// fileSeconds converts seconds to a duration; the sign is checked where
// the field is used.
func fileSeconds(node, field string, v float64) (time.Duration, error) {
	if math.IsNaN(v) || math.Abs(v) > 1e9 {
		return 0, &FieldError{Node: node, Field: field, Reason: fmt.Sprintf("must be within ±1e9 seconds, got %v", v)}
	}
	return time.Duration(math.Round(v * float64(time.Second))), nil
}
