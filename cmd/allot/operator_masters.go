package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master/api"
)

// operatorCommand holds the masters' own administration: Raft membership.
func operatorCommand() *cobra.Command {
	o := &operatorFlags{}
	cmd := &cobra.Command{Use: "operator", Short: "Administer the masters themselves"}
	o.register(cmd)
	rc := &cobra.Command{Use: "raft", Short: "List, add and remove the masters' Raft members (to replace a master)"}
	peers := func(w io.Writer, p api.RaftPeers) {
		table(w, "ID\tADDRESS\tLEADER", func(tw io.Writer) {
			for _, x := range p.Peers {
				fmt.Fprintf(tw, "%s\t%s\t%t\n", x.ID, x.Address, x.Leader)
			}
		})
	}
	rc.AddCommand(&cobra.Command{
		Use:   "list-peers",
		Short: "List the masters' Raft members",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RaftPeers, error) { return c.RaftPeers(ctx) }, peers)
		},
	}, &cobra.Command{
		Use:   "add-peer NODE_ID RAFT_ADDRESS",
		Short: "Add a master, started without --bootstrap, to the Raft configuration",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RaftPeers, error) {
				return c.AddRaftPeer(ctx, args[0], args[1])
			}, peers)
		},
	}, &cobra.Command{
		Use:   "remove-peer NODE_ID",
		Short: "Remove a master, e.g. one gone for good, from the Raft configuration",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.RaftPeers, error) {
				return c.RemoveRaftPeer(ctx, args[0])
			}, peers)
		},
	})
	cmd.AddCommand(rc, snapshotCommand(o))
	return cmd
}

// snapshotCommand backs the replicated state up and restores it.
func snapshotCommand(o *operatorFlags) *cobra.Command {
	sc := &cobra.Command{Use: "snapshot", Short: "Back the masters' replicated state up, or restore it"}
	sc.AddCommand(&cobra.Command{
		Use:   "save FILE",
		Short: "Write a snapshot of the replicated state to FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var buf bytes.Buffer
			return call(o, cmd, func(ctx context.Context, c *api.Client) (int64, error) {
				n, err := c.SaveSnapshot(ctx, &buf)
				if err != nil {
					return n, err
				}
				return n, os.WriteFile(args[0], buf.Bytes(), 0o600)
			}, func(w io.Writer, n int64) { fmt.Fprintf(w, "saved %d bytes to %s\n", n, args[0]) })
		},
	}, &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the cluster's replicated state with the snapshot in FILE",
		Long: `Replace the cluster's replicated state with a snapshot "snapshot save" wrote.
Every master installs it and the leader rebuilds its allocator from it; agents and
frameworks then reconcile with it as after a failover.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			return call(o, cmd, func(ctx context.Context, c *api.Client) (api.Restored, error) {
				return c.RestoreSnapshot(ctx, data)
			}, func(w io.Writer, r api.Restored) {
				fmt.Fprintf(w, "restored the state as of Raft index %d\n", r.SnapshotIndex)
			})
		},
	})
	return sc
}
