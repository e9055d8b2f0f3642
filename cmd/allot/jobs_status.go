package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/jobrunner"
	"github.com/allot-project/allot/jobs"
)

func jobsStatus(f *jobsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status [NAME]",
		Short: "The jobs, or one job's versions and instances",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				names, err := jobrunner.Names(ctx, s)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "JOB\tVERSION\tSTATE\tINSTANCES")
				for _, name := range names {
					v, _, err := jobrunner.Read(ctx, s, name)
					if err != nil {
						return err
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", name, v.Spec.Version, v.State(), v.Counts())
				}
				return tw.Flush()
			}
			v, ok, err := jobrunner.Read(ctx, s, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no job %q", args[0])
			}
			fmt.Fprintf(out, "job %s: version %d, %s", v.Name, v.Spec.Version, v.State())
			if v.Status.Message != "" {
				fmt.Fprintf(out, " (%s)", v.Status.Message)
			}
			fmt.Fprintf(out, "\nversions kept: %v, last stable: %d\n", v.Spec.Versions, v.Status.StableVersion)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "INSTANCE\tSTATE\tHEALTHY\tAGENT\tSINCE\tMESSAGE")
			for _, in := range v.Instances {
				fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\n", in.ID, in.State, in.Healthy, in.Agent, in.Since.Format(time.RFC3339), in.Message)
			}
			return tw.Flush()
		},
	}
}

func jobsStop(f *jobsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a job: the runner kills its instances",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			if err := jobs.Stop(ctx, s, args[0], time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s: stopping\n", args[0])
			return nil
		},
	}
}

func jobsHistory(f *jobsFlags) *cobra.Command {
	files := false
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "The versions of a job the store keeps",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, s, done, err := f.open(cmd)
			if err != nil {
				return err
			}
			defer done()
			v, ok, err := jobrunner.Read(ctx, s, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("no job %q", args[0])
			}
			out := cmd.OutOrStdout()
			for i := len(v.Spec.Versions) - 1; i >= 0; i-- {
				n := v.Spec.Versions[i]
				var notes []string
				if n == v.Spec.Version {
					notes = append(notes, "current: "+v.State())
					if v.Spec.Revert {
						notes = append(notes, "a revert")
					}
				}
				if n == v.Status.StableVersion {
					notes = append(notes, "last healthy throughout")
				}
				fmt.Fprintf(out, "version %d", n)
				if len(notes) > 0 {
					fmt.Fprintf(out, " (%s)", strings.Join(notes, ", "))
				}
				fmt.Fprintln(out)
				if files {
					src, _, err := jobrunner.Source(ctx, s, args[0], n)
					if err != nil {
						return err
					}
					for _, line := range strings.Split(strings.TrimRight(string(src), "\n"), "\n") {
						fmt.Fprintln(out, "  | "+line)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&files, "files", "p", false, "print each version's job file")
	return cmd
}
