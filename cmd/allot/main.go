// Command allot is the single binary of the allot cluster manager: the
// master, the agent, the local development cluster, the simulators and the
// operator commands. It only wires flags to the packages that do the work.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

func main() {
	root := &cobra.Command{
		Use:           "allot",
		Short:         "allot is a two-level cluster manager with hierarchical DRF offers",
		Version:       protocol.BuildVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(simCommand(), benchCommand(), masterCommand(), agentCommand(), taskShimCommand())
	root.AddCommand(devCommand(), natsConfigCommand(), runCommand(), jobsCommand())
	root.AddCommand(operatorCommands()...)
	strict(root)
	if err := root.Execute(); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code))
		}
		msg := err.Error()
		if errors.Is(err, api.ErrUnavailable) {
			msg += "; are the masters running there? Name them with --masters or $ALLOT_MASTERS"
		}
		// One line, so scripts can show the reason as it is.
		fmt.Fprintln(os.Stderr, "allot:", strings.ReplaceAll(msg, "\n", " "))
		os.Exit(1)
	}
}

// strict makes every command below cmd refuse what it cannot run: a group
// of commands given an unknown one fails instead of printing its help,
// and wrong arguments say how the command is used.
func strict(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		strict(c)
	}
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q (its commands: %s)", args[0], cmd.CommandPath(), subcommands(cmd))
			}
			return cmd.Help()
		}
		return
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return fmt.Errorf("%w; usage: %s", err, cmd.UseLine())
			}
			return nil
		}
	}
}

func subcommands(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}
