// Command allot is the single binary of the allot cluster manager: the
// master, the agent, the local development cluster, the simulators and the
// operator commands. It only wires flags to the packages that do the work.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "allot",
		Short:         "allot is a two-level cluster manager with hierarchical DRF offers",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(simCommand(), masterCommand(), agentCommand(), taskShimCommand())
	root.AddCommand(devCommand(), natsConfigCommand())
	root.AddCommand(operatorCommands()...)
	if err := root.Execute(); err != nil {
		// One line, so scripts can show the reason as it is.
		fmt.Fprintln(os.Stderr, "allot:", strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(1)
	}
}
