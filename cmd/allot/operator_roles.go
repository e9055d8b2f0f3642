package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

func roleOpsCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "roles", Aliases: []string{"role"}, Short: "List roles and set their weights and quotas"}
	o.register(cmd)
	var weight float64
	var guarantee, limit, preemption string
	var constraints []string
	set := &cobra.Command{
		Use:   "set ROLE_PATH",
		Short: "Set a role's weight and quota (e.g. set eng/prod --weight 2 --guarantee cpus=4000 --limit cpus=8000,mem=16384)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// What is not given keeps its setting; a flag given empty
			// removes it.
			req := api.RoleRequest{Preemption: preemption}
			if cmd.Flags().Changed("preemption") && preemption == "" {
				req.Preemption = api.PreemptionInherit
			}
			if cmd.Flags().Changed("weight") {
				req.Weight = &weight
			}
			var err error
			if req.Guarantee, err = parseAmounts("--guarantee", guarantee); err != nil {
				return err
			}
			if req.Guarantee == nil && cmd.Flags().Changed("guarantee") {
				req.Guarantee = map[string]int64{}
			}
			if req.Limit, err = parseAmounts("--limit", limit); err != nil {
				return err
			}
			if req.Limit == nil && cmd.Flags().Changed("limit") {
				req.Limit = map[string]int64{}
			}
			if cmd.Flags().Changed("offer-constraint") {
				req.OfferConstraints = []protocol.Constraint{}
			}
			for _, cs := range constraints {
				if strings.TrimSpace(cs) == "" {
					continue
				}
				c, err := protocol.ParseConstraint(cs)
				if err != nil {
					return fmt.Errorf("--offer-constraint: %w", err)
				}
				req.OfferConstraints = append(req.OfferConstraints, c)
			}
			stderr := cmd.ErrOrStderr()
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RoleConfig, error) {
				return c.SetRole(ctx, args[0], req)
			}, func(w io.Writer, rc api.RoleConfig) {
				for _, warning := range rc.Warnings {
					fmt.Fprintf(stderr, "warning: role %s: %s\n", rc.Path, warning)
				}
				fmt.Fprintf(w, "role %s: weight %g, guarantee %s, limit %s, offer constraints %s, preemption %s\n", rc.Path, rc.Weight,
					orNone(api.FormatResources(rc.Guarantee)), orNone(api.FormatResources(rc.Limit)), constraintList(rc.OfferConstraints),
					orInherited(rc.Preemption))
			})
		},
	}
	set.Flags().Float64Var(&weight, "weight", 1, "the role's weight among its siblings (not given: unchanged, 1 for a new role)")
	set.Flags().StringVar(&guarantee, "guarantee", "", "quota guarantee as name=amount pairs, cpus in milli-CPU and mem in MiB (not given: unchanged; empty: none)")
	set.Flags().StringVar(&limit, "limit", "", "quota limit as name=amount pairs, cpus in milli-CPU and mem in MiB (not given: unchanged; empty: none)")
	set.Flags().StringVar(&preemption, "preemption", "", "the role's preemption policy: off, guarantees or fair (not given: unchanged; empty: its parent's, at the top the cluster's --preemption)")
	set.Flags().StringArrayVar(&constraints, "offer-constraint", nil, "offer only agents satisfying this constraint to the role's frameworks, e.g. pool==gpu or 'zone in z1,z2' (repeatable; not given: unchanged; given empty: every agent)")
	cmd.AddCommand(listCommand(o, "List the roles with their shares and limits", func(st api.State) any { return st.Roles }, printRoles), set)
	return cmd
}

// parseAmounts reads flag's value "cpus=8000,mem=16384".
func parseAmounts(flag, s string) (map[string]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		name, amount, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseInt(amount, 10, 64)
		if !ok || name == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("%s %q: want name=amount pairs with whole amounts, e.g. cpus=8000,mem=16384", flag, s)
		}
		out[name] = n
	}
	return out, nil
}

// orInherited names an unset per-role setting.
func orInherited(s string) string {
	if s == "" {
		return "inherited"
	}
	return s
}
