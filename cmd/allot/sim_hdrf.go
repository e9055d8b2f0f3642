package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/offers/scenario"
	"github.com/allot-project/allot/sim/hdrf"
)

const simHDRFLong = `Replay an H-DRF scenario (a weighted tree whose leaves run identical tasks on
one pool of capacity) under an allocation policy and print each leaf's running
tasks and usage over capacity as JSON (--policy lists the policies).

A scenario with a timeline (leaf arrivals and task durations, role guarantees,
preemption settings, until) is replayed event by event as the master drives the
allocator: allocation rounds, task ends, a preemption decision every interval,
warnings, kills at the deadline, withdrawn warnings. The output then reports,
per role and leaf, its tasks and share over time, the tasks warned, killed and
withdrawn, and when it first held its guarantee and its fair share.
--preemption (off, guarantees or fair) replaces the file's cluster policy.

Example:
  allot sim hdrf --scenario examples/scenarios/prod-arrives.json --preemption fair`

// simHDRFOptions are the flags of `allot sim hdrf`: the scenario and the
// policies to replay it under.
type simHDRFOptions struct {
	policy, preemption, scenarioPath string
}

func simHDRFCommand() *cobra.Command {
	o := &simHDRFOptions{}
	cmd := &cobra.Command{
		Use:   "hdrf",
		Short: "Replay an H-DRF scenario and print the allocation as JSON",
		Long:  simHDRFLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	return cmd
}

func (o *simHDRFOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.policy, "policy", string(offers.PolicyDynamic), "allocation policy: "+offers.PolicyHelp())
	cmd.Flags().StringVar(&o.preemption, "preemption", "", "cluster preemption policy for a scenario with a timeline: off, guarantees or fair (default: the file's)")
	cmd.Flags().StringVar(&o.scenarioPath, "scenario", "", "scenario JSON file, or - for stdin")
}

func (o *simHDRFOptions) run(stdin io.Reader, out io.Writer) error {
	if o.scenarioPath == "" {
		return fmt.Errorf("--scenario is required (a file, or - for stdin)")
	}
	data, err := readScenario(stdin, o.scenarioPath)
	if err != nil {
		return err
	}
	res, err := replayHDRF(data, o.policy, o.preemption)
	if err != nil {
		return err
	}
	return writeJSON(out, res)
}

func readScenario(stdin io.Reader, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(io.LimitReader(stdin, 64<<20))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<20))
}

// replayHDRF replays a scenario with a timeline through offers/scenario, and
// one without exactly as before, through hdrf.Run.
func replayHDRF(data []byte, policy, preemption string) (any, error) {
	file, err := scenario.ParseFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if !file.Timed() {
		if preemption != "" {
			return nil, fmt.Errorf("--preemption needs a scenario with a timeline (preemption, until, arrival, duration or guarantee)")
		}
		sc, err := hdrf.ParseScenario(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return hdrf.Run(sc, policy)
	}
	pol, err := offers.ParsePolicy(policy)
	if err != nil {
		return nil, err
	}
	if preemption != "" {
		if _, err := offers.ParsePreemptionPolicy(preemption); err != nil {
			return nil, fmt.Errorf("--preemption: %w", err)
		}
	}
	return file.Replay(pol, offers.PreemptionPolicy(preemption))
}
