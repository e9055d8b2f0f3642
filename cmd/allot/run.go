package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// runFlags are `allot run`'s settings.
type runFlags struct {
	cpus                    float64
	mem                     string
	count                   int
	role, name              string
	nats, principal, secret string
	constraints, fetch      []string
	killGrace, timeout      time.Duration
	logLevel                string
}

// exitCode is an error that ends the process with its code and no message:
// the command's own exit code.
type exitCode int

func (e exitCode) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// runCommand is `allot run`: a one-off command on the cluster, as a
// framework of its own that lives as long as the command.
func runCommand() *cobra.Command {
	f := runFlags{cpus: 0.1, mem: "64M", count: 1, name: "allot-run", killGrace: 5 * time.Second, logLevel: "warn"}
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARGS...]",
		Short: "Run a command on the cluster, print its output, and exit with its exit code",
		Long: `Run a command on the cluster's agents, --count instances of it, as a framework of
its own: print each instance's stdout and stderr as it runs (prefixed [i] when there
are several), and exit with the command's exit code (the first non-zero one of the
instances, by index). Ctrl-C kills the instances and removes the framework.

The cluster is named by --nats (or $ALLOT_NATS), and with credentials by --principal
and --secret (or $ALLOT_PRINCIPAL and $ALLOT_SECRET), as allot dev prints them. Reading
the output needs the masters and agents started with the same --files-secret.

Example:
  allot run --cpus 0.5 --mem 128M --count 4 --role eng/batch --constraint 'rack == r1' -- ./tool --flag`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runOnCluster(ctx, f, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&f.cpus, "cpus", f.cpus, "CPUs of each instance, e.g. 0.5")
	fl.StringVar(&f.mem, "mem", f.mem, "memory of each instance: 128M, 2G, or MiB")
	fl.IntVar(&f.count, "count", f.count, "instances to run")
	fl.StringVar(&f.role, "role", "", "role to run in (default: the cluster's default role)")
	fl.StringVar(&f.name, "name", f.name, "the framework's name")
	fl.StringArrayVar(&f.constraints, "constraint", nil, "run only on agents satisfying this, e.g. 'rack == r1' (repeatable)")
	fl.StringArrayVar(&f.fetch, "fetch", nil, "fetch URL into the sandbox first, URL#sha256=HEX to check it (repeatable)")
	fl.StringVar(&f.nats, "nats", os.Getenv("ALLOT_NATS"), "the cluster's NATS URLs, comma-separated ($ALLOT_NATS)")
	fl.StringVar(&f.principal, "principal", os.Getenv("ALLOT_PRINCIPAL"), "framework principal ($ALLOT_PRINCIPAL)")
	fl.StringVar(&f.secret, "secret", os.Getenv("ALLOT_SECRET"), "the principal's secret ($ALLOT_SECRET)")
	fl.DurationVar(&f.killGrace, "kill-grace", f.killGrace, "on Ctrl-C, how long the instances get to exit before they are killed")
	fl.DurationVar(&f.timeout, "timeout", 0, "give up, killing the instances, after this long (0: never)")
	fl.StringVar(&f.logLevel, "log-level", f.logLevel, "the SDK's log level on stderr")
	return cmd
}

// runOnCluster runs argv as f says and returns exitCode for a command that
// exited non-zero.
func runOnCluster(ctx context.Context, f runFlags, argv []string, stdout, stderr io.Writer) error {
	tasks, shape, err := f.tasks(argv)
	if err != nil {
		return err
	}
	if f.nats == "" {
		return errors.New("--nats: no URL (set it, or $ALLOT_NATS as allot dev prints it)")
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	s := newRunScheduler(tasks)
	opts := []framework.Option{framework.WithNATSURLs(strings.Split(f.nats, ",")...), framework.WithName(f.name),
		framework.WithLogger(hclog.New(&hclog.LoggerOptions{Name: "allot-run", Level: hclog.LevelFromString(f.logLevel), Output: stderr}))}
	if f.role != "" {
		opts = append(opts, framework.WithRole(f.role))
	}
	if f.principal != "" {
		opts = append(opts, framework.WithPrincipal(f.principal), framework.WithSecret(f.secret))
	}
	d, err := framework.NewDriver(s, opts...)
	if err != nil {
		return err
	}
	runCtx, stopDriver := context.WithCancel(context.Background())
	driverDone := make(chan error, 1)
	go func() { driverDone <- d.Run(runCtx) }()
	defer func() {
		teardown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d.Teardown(teardown); err != nil {
			fmt.Fprintf(stderr, "allot run: tearing the framework down: %v\n", err)
		}
		stopDriver()
		<-driverDone
	}()
	select {
	case <-d.Ready():
	case err := <-driverDone:
		driverDone <- err
		return fmt.Errorf("connect to the cluster: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := d.Demand(ctx, shape); err != nil {
		return fmt.Errorf("declare demand: %w", err)
	}
	out := newRunOutput(d, s, len(tasks) > 1, stdout, stderr)
	return s.wait(ctx, d, out, f.killGrace, stderr)
}

// tasks builds the instances argv runs as, and their shape.
func (f runFlags) tasks(argv []string) ([]protocol.TaskInfo, protocol.TaskShape, error) {
	if f.count < 1 {
		return nil, protocol.TaskShape{}, fmt.Errorf("--count %d: want at least 1", f.count)
	}
	if !(f.cpus > 0) || math.IsInf(f.cpus, 0) {
		return nil, protocol.TaskShape{}, fmt.Errorf("--cpus %v: want more than 0", f.cpus)
	}
	mem, err := protocol.ParseMiB(f.mem)
	if err != nil {
		return nil, protocol.TaskShape{}, fmt.Errorf("--mem %q: %w", f.mem, err)
	}
	var cons []protocol.Constraint
	for _, s := range f.constraints {
		c, err := protocol.ParseConstraint(s)
		if err != nil {
			return nil, protocol.TaskShape{}, fmt.Errorf("--constraint: %w", err)
		}
		cons = append(cons, c)
	}
	var uris []protocol.URI
	for _, s := range f.fetch {
		u, sum, _ := strings.Cut(s, "#sha256=")
		if u == "" {
			return nil, protocol.TaskShape{}, fmt.Errorf("--fetch %q: want URL or URL#sha256=HEX", s)
		}
		uris = append(uris, protocol.URI{Value: u, Sha256: sum, Executable: true})
	}
	milli := int64(math.Round(f.cpus * 1000))
	var tasks []protocol.TaskInfo
	for i := range f.count {
		b := framework.NewTask(protocol.TaskID("run-"+strconv.Itoa(i)), argv[0], argv[1:]...).CPUs(milli).Mem(mem).Constraint(cons...)
		for _, u := range uris {
			b.URI(u)
		}
		tasks = append(tasks, b.Build())
	}
	shape := placement.ShapeOf(tasks[0], int64(f.count))
	shape.Constraints = cons
	return tasks, shape, nil
}
