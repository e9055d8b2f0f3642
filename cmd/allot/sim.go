package main

import (
	"github.com/spf13/cobra"
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
	cmd.AddCommand(simPackCommand())
	return cmd
}
