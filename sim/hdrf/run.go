package hdrf

import (
	"fmt"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/offers/scenario"
)

// Result is the JSON output of `allot sim hdrf`.
type Result struct {
	Policy string          `json:"policy"`
	Leaves map[string]Leaf `json:"leaves"`
}

// Leaf is a leaf's running tasks and usage over capacity per resource.
type Leaf struct {
	Tasks  int64              `json:"tasks"`
	Shares map[string]float64 `json:"shares"`
}

// Run replays the scenario under a policy: one fill, then the churn.
func Run(sc Scenario, policyName string) (Result, error) {
	policy, err := offers.ParsePolicy(policyName)
	if err != nil {
		return Result{}, err
	}
	spec, err := sc.Spec()
	if err != nil {
		return Result{}, err
	}
	run, err := scenario.New(spec, policy)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrBadScenario, err)
	}
	if _, err := run.Fill(); err != nil {
		return Result{}, err
	}
	if sc.Churn != nil {
		if err := run.Churn(sc.Churn.Completions, sc.Churn.Seed); err != nil {
			return Result{}, err
		}
	}
	res := Result{Policy: string(policy), Leaves: map[string]Leaf{}}
	for _, leaf := range run.Leaves() {
		res.Leaves[leaf] = Leaf{Tasks: run.Tasks(leaf), Shares: run.Shares(leaf)}
	}
	return res, nil
}
