package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/sim"
)

func simCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Replay workloads against the scheduling code the master runs",
	}
	cmd.AddCommand(simHDRFCommand())
	cmd.AddCommand(simCarbyneCommand())
	cmd.AddCommand(simCoflowCommand())
	cmd.AddCommand(simPhoenixCommand())
	return cmd
}

func simHDRFCommand() *cobra.Command {
	var policy, scenarioPath string
	cmd := &cobra.Command{
		Use:   "hdrf",
		Short: "Replay an H-DRF scenario and print the allocation as JSON",
		Long: `Replay an H-DRF scenario (a weighted tree whose leaves run identical tasks on
one pool of capacity) under an allocation policy and print each leaf's running
tasks and usage over capacity as JSON. Policies: dynamic (default), static,
paper, naive, collapsed, mesos.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if scenarioPath == "" {
				return fmt.Errorf("--scenario is required (a file, or - for stdin)")
			}
			var in io.Reader = cmd.InOrStdin()
			if scenarioPath != "-" {
				f, err := os.Open(scenarioPath)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			sc, err := sim.ParseHDRFScenario(in)
			if err != nil {
				return err
			}
			res, err := sim.RunHDRF(sc, policy)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		},
	}
	cmd.Flags().StringVar(&policy, "policy", "dynamic", "allocation policy: dynamic, static, paper, naive, collapsed or mesos")
	cmd.Flags().StringVar(&scenarioPath, "scenario", "", "scenario JSON file, or - for stdin")
	return cmd
}
