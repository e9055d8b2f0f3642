package hdrf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/offers/scenario"
)

// ErrBadScenario reports an H-DRF scenario that cannot be replayed.
var ErrBadScenario = errors.New("bad scenario")

// Scenario is the JSON input of `allot sim hdrf`.
//
// Quantities may carry up to three decimals (a demand of 0.01 GPUs, say);
// they are replayed in thousandths so that every amount is an integer.
type Scenario struct {
	Capacity map[string]float64 `json:"capacity"`
	Root     Node               `json:"root"`
	Churn    *Churn             `json:"churn,omitempty"`
	// Agents splits the capacity over this many equal agents (default 1).
	Agents int `json:"agents,omitempty"`
}

// Node is a node of the scenario tree; a node without children is a
// leaf and must have a demand.
type Node struct {
	Name     string             `json:"name"`
	Weight   *float64           `json:"weight,omitempty"`
	Children []Node             `json:"children,omitempty"`
	Demand   map[string]float64 `json:"demand,omitempty"`
	// Tasks is the leaf's total number of tasks (default unlimited).
	Tasks *int64 `json:"tasks,omitempty"`
}

// Churn asks for random task completions after the first fill.
type Churn struct {
	Completions int    `json:"completions"`
	Seed        uint64 `json:"seed"`
}

// unitScale is how many replay units make one scenario unit.
const unitScale = 1000

// ParseScenario reads a scenario strictly: unknown fields, trailing data
// and negative numbers are errors.
func ParseScenario(r io.Reader) (Scenario, error) {
	var sc Scenario
	data, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return sc, fmt.Errorf("%w: read: %v", ErrBadScenario, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return sc, fmt.Errorf("%w: malformed JSON: %v", ErrBadScenario, err)
	}
	if dec.More() {
		return sc, fmt.Errorf("%w: trailing data after the scenario", ErrBadScenario)
	}
	return sc, nil
}

// Spec converts the scenario to the replayer's integer form.
func (sc Scenario) Spec() (scenario.Spec, error) {
	spec := scenario.Spec{Capacity: map[string]int64{}, Agents: sc.Agents}
	if sc.Agents < 0 {
		return spec, fmt.Errorf("%w: negative agents", ErrBadScenario)
	}
	if len(sc.Capacity) == 0 {
		return spec, fmt.Errorf("%w: no capacity", ErrBadScenario)
	}
	for name, v := range sc.Capacity {
		n, err := units("capacity "+name, v)
		if err != nil {
			return spec, err
		}
		spec.Capacity[name] = n
	}
	if sc.Churn != nil && sc.Churn.Completions < 0 {
		return spec, fmt.Errorf("%w: negative churn completions", ErrBadScenario)
	}
	root, err := convertNode(sc.Root, true)
	if err != nil {
		return spec, err
	}
	spec.Root = root
	return spec, nil
}

func convertNode(n Node, isRoot bool) (scenario.Node, error) {
	out := scenario.Node{Name: n.Name, Tasks: offers.Unlimited}
	if n.Weight != nil {
		if !(*n.Weight > 0) || math.IsInf(*n.Weight, 0) {
			return out, fmt.Errorf("%w: node %q: weight must be positive", ErrBadScenario, n.Name)
		}
		out.Weight = *n.Weight
	}
	if n.Tasks != nil {
		if *n.Tasks < 0 {
			return out, fmt.Errorf("%w: node %q: negative tasks", ErrBadScenario, n.Name)
		}
		out.Tasks = *n.Tasks
	}
	if len(n.Children) == 0 && !isRoot {
		if len(n.Demand) == 0 {
			return out, fmt.Errorf("%w: leaf %q has no demand", ErrBadScenario, n.Name)
		}
		out.Demand = map[string]int64{}
		for name, v := range n.Demand {
			u, err := units(fmt.Sprintf("leaf %q demand %s", n.Name, name), v)
			if err != nil {
				return out, err
			}
			out.Demand[name] = u
		}
		return out, nil
	}
	if len(n.Demand) > 0 {
		return out, fmt.Errorf("%w: node %q has children and a demand", ErrBadScenario, n.Name)
	}
	for _, c := range n.Children {
		cn, err := convertNode(c, false)
		if err != nil {
			return out, err
		}
		out.Children = append(out.Children, cn)
	}
	return out, nil
}

func units(what string, v float64) (int64, error) {
	if v < 0 || math.IsNaN(v) || v > 1e12 {
		return 0, fmt.Errorf("%w: %s must be between 0 and 1e12, got %v", ErrBadScenario, what, v)
	}
	u := math.Round(v * unitScale)
	if math.Abs(u-v*unitScale) > 1e-6*math.Max(1, u) {
		return 0, fmt.Errorf("%w: %s has more than three decimals (%v)", ErrBadScenario, what, v)
	}
	return int64(u), nil
}
