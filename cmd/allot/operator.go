package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
)

// The operator commands talk to the masters' HTTP API (master/api): any
// master answers, followers redirect to the leader.

// defaultMasters are the HTTP APIs of `allot dev`'s three masters.
const defaultMasters = "127.0.0.1:5050,127.0.0.1:5051,127.0.0.1:5052"

// operatorFlags are the flags every operator command takes.
type operatorFlags struct {
	masters   string
	token     string
	principal string
	secret    string
	json      bool
	timeout   time.Duration
}

func (o *operatorFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&o.masters, "masters", envOr("ALLOT_MASTERS", defaultMasters), "comma-separated masters' HTTP addresses (host:port or URL; $ALLOT_MASTERS)")
	fl.StringVar(&o.token, "token", os.Getenv("ALLOT_OPERATOR_TOKEN"), "operator token for actions and full views, when the masters have one ($ALLOT_OPERATOR_TOKEN)")
	fl.StringVar(&o.principal, "principal", os.Getenv("ALLOT_PRINCIPAL"), "read as this framework principal, without the operator token: its own frameworks and tasks only ($ALLOT_PRINCIPAL)")
	fl.StringVar(&o.secret, "secret", os.Getenv("ALLOT_SECRET"), "the secret of --principal ($ALLOT_SECRET)")
	fl.BoolVar(&o.json, "json", false, "print the API's JSON instead of a table")
	fl.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up on a request after this long")
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// newClient returns a client of the --masters.
func (o *operatorFlags) newClient() (*api.Client, error) {
	return api.NewClient(strings.Split(o.masters, ","), api.WithToken(o.token), api.WithPrincipal(o.principal, o.secret))
}

// call makes one API call bounded by --timeout and prints its answer: as
// JSON with --json, else with table.
func call[T any](o *operatorFlags, cmd *cobra.Command, do func(context.Context, *api.Client) (T, error), table func(io.Writer, T)) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	v, err := do(ctx, c)
	if err != nil {
		return err
	}
	return o.emit(cmd.OutOrStdout(), v, func(w io.Writer) { table(w, v) })
}

// emit prints v as indented JSON with --json, else calls table.
func (o *operatorFlags) emit(w io.Writer, v any, table func(io.Writer)) error {
	if o.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	table(w)
	return nil
}

// operatorCommands returns the operator commands.
func operatorCommands() []*cobra.Command {
	o := &operatorFlags{}
	status := &cobra.Command{
		Use:   "status",
		Short: "Show the leader and a summary of agents, frameworks, tasks and offers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.State, error) {
				// The leader as the state names it: the one that served
				// it, never a follower's stale idea of who leads.
				return c.State(ctx)
			}, printStatus)
		},
	}
	o.register(status)
	return []*cobra.Command{status, agentOpsCommand(), frameworkOpsCommand(), roleOpsCommand(), eventsCommand(), operatorCommand(),
		taskOpsCommand(), coflowOpsCommand(),
		listingCommand("offer", "List outstanding offers", "List the outstanding offers", func(st api.State) any { return st.Offers }, printOffers)}
}

// listCommand is a "list" subcommand printing part of the state.
func listCommand(o *operatorFlags, short string, pick func(api.State) any, table func(io.Writer, api.State)) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st api.State
			return call(o, cmd, func(ctx context.Context, c *api.Client) (any, error) {
				var err error
				st, err = c.State(ctx)
				return pick(st), err
			}, func(w io.Writer, _ any) { table(w, st) })
		},
	}
}

// listingCommand is a noun whose only subcommand is "list".
func listingCommand(noun, short, listShort string, pick func(api.State) any, table func(io.Writer, api.State)) *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: noun + "s", Aliases: []string{noun}, Short: short}
	o.register(cmd)
	cmd.AddCommand(listCommand(o, listShort, pick, table))
	return cmd
}
