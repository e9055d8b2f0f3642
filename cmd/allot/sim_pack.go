package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/offers"
	"github.com/allot-project/allot/sim/pack"
)

// simPackPolicies lists the placement policies `allot sim pack` knows, in
// the order it runs them by default: the reference ones, then any added here.
func simPackPolicies() []pack.Policy {
	return append(pack.Policies(),
		pack.Allocator(offers.PlacementPack), pack.Allocator(offers.PlacementSpread), pack.Allocator(offers.PlacementFirstFit))
}

func simPackCommand() *cobra.Command {
	var podsName, nodesName, policyList, mode string
	var seeds int
	var speedup float64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Replay a GPU cluster trace through placement policies (FGD and its baselines)",
		Long: `Place the pods of a GPU cluster trace (Alibaba's openb, embedded; see
sim/pack/data/openb/README.md) with each placement policy and report how much
of the GPU capacity it allocates, as in "Beware of Fragmentation" (Weng et
al., USENIX ATC 2023). Every placement is checked against the simulator's own
device-level state: a policy that overcommits fails the run.

Modes:
  fill    the paper's protocol: per seed, the pods shuffled, then resampled
          until 130% of the GPU capacity was requested, arrive one by one;
          nothing departs and a pod that does not fit fails. Reports the GPU
          allocation ratio when 100% was requested and the arrived fraction at
          which 1% of the capacity was first lost, means over seeds.
  replay  the trace's own timeline, compressed by --speedup: pods arrive at
          their creation time and run for their traced time; pods that do not
          fit wait in FIFO order. Reports waits and pods never placed.

Policies: first-fit, best-fit, random (seeded), fgd (fragmentation gradient
descent), and allot's own allocator (package offers) driven as the leader
drives it, under each of its placements: allot-pack, allot-spread,
allot-first-fit (docs/placement.md).

Examples:
  allot sim pack --seeds 10
  allot sim pack --pods gpuspec33 --policies best-fit,fgd --json
  allot sim pack --mode replay --policies fgd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if seeds < 1 {
				return fmt.Errorf("--seeds %d: want at least 1", seeds)
			}
			if mode != "fill" && mode != "replay" {
				return fmt.Errorf("--mode %q: want fill or replay", mode)
			}
			var names []string
			if policyList != "" {
				names = strings.Split(policyList, ",")
			}
			policies, err := pack.SelectPolicies(simPackPolicies(), names)
			if err != nil {
				return fmt.Errorf("--policies: %w", err)
			}
			nodes, err := pack.LoadNodes(nodesName)
			if err != nil {
				return fmt.Errorf("--nodes: %w", err)
			}
			trace, err := pack.LoadPods(podsName)
			if err != nil {
				return fmt.Errorf("--pods: %w", err)
			}
			seedList := make([]uint64, seeds)
			for i := range seedList {
				seedList[i] = uint64(i + 1)
			}
			out := cmd.OutOrStdout()
			if mode == "fill" {
				r, err := pack.RunFill(pack.FillConfig{Nodes: nodes, Trace: trace, Seeds: seedList,
					PodsName: podsName, NodesName: nodesName}, policies)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, r)
				}
				return pack.WriteFill(out, r)
			}
			r, err := pack.RunReplay(pack.ReplayConfig{Nodes: nodes, Trace: trace, Seeds: seedList,
				Speedup: speedup, PodsName: podsName, NodesName: nodesName}, policies)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(out, r)
			}
			return pack.WriteReplay(out, r)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&podsName, "pods", "default", "workload: default, gpuspec33 (openb) or a pod-list CSV file")
	fl.StringVar(&nodesName, "nodes", "gpu", "nodes: gpu (openb's GPU nodes), all (every openb node) or a node-list CSV file")
	fl.StringVar(&policyList, "policies", "", "comma-separated policies to run (default: all)")
	fl.IntVar(&seeds, "seeds", 10, "run seeds 1..N and report means")
	fl.StringVar(&mode, "mode", "fill", "fill (the paper's protocol) or replay (the trace's timeline)")
	fl.Float64Var(&speedup, "speedup", pack.DefaultSpeedup, "replay: divide the trace's times by this factor")
	fl.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}
