package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/executor/runner"
)

// taskShimCommand is the supervisor the agent starts for every task (see
// executor/runner). Hidden: only the agent runs it.
func taskShimCommand() *cobra.Command {
	return &cobra.Command{
		Use:                runner.ShimCommand,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			os.Exit(runner.ShimMain(args))
			return nil
		},
	}
}
