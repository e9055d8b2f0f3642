package main

import (
	"cmp"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/protocol"
)

// agentFlags are the `allot agent` settings; a config file (JSON with the
// same names) fills what the command line does not set.
type agentFlags struct {
	NATS           string        `json:"nats"`
	NATSCA         string        `json:"nats_ca"`
	NATSCert       string        `json:"nats_cert"`
	Principal      string        `json:"principal"`
	Secret         string        `json:"secret"`
	NATSKey        string        `json:"nats_key"`
	SubjectPrefix  string        `json:"subject_prefix"`
	WorkDir        string        `json:"work_dir"`
	Hostname       string        `json:"hostname"`
	Resources      string        `json:"resources"`
	Attributes     string        `json:"attributes"`
	Devices        *string       `json:"devices"`
	Isolation      string        `json:"isolation"`
	HTTPAddr       string        `json:"http"`
	FilesToken     string        `json:"files_token"`
	FilesSecret    string        `json:"files_secret"`
	FilesTokenTTL  time.Duration `json:"files_token_ttl"`
	TaskUser       string        `json:"task_user"`
	DefaultGrace   time.Duration `json:"default_grace"`
	ResendInterval time.Duration `json:"resend_interval"`
	ShuffleSlots   int           `json:"shuffle_slots"`
	ShuffleEgress  byteSize      `json:"shuffle_egress"`
	ShuffleIngress byteSize      `json:"shuffle_ingress"`
	LogLevel       string        `json:"log_level"`
	// The sandbox collector (executor.Config.GCDelay and the others).
	GCDelay         time.Duration `json:"gc_delay"`
	GCInterval      time.Duration `json:"gc_interval"`
	GCDiskThreshold float64       `json:"gc_disk_threshold"`
	GCDiskBudget    byteSize      `json:"gc_disk_budget"`
}

// defaultAgentHTTP is where an agent's file server listens by default:
// not 5051, one of the masters' ports the CLI looks at by default.
const defaultAgentHTTP = "0.0.0.0:5060"

func agentCommand() *cobra.Command {
	f := agentFlags{
		NATS: "nats://127.0.0.1:4222", SubjectPrefix: "allot", Isolation: string(runner.IsolationAuto),
		HTTPAddr: defaultAgentHTTP, DefaultGrace: runner.DefaultGrace, ResendInterval: time.Second,
		ShuffleSlots: executor.DefaultShuffleSlots, FilesTokenTTL: executor.DefaultFilesTokenTTL, LogLevel: "info",
		GCInterval: executor.DefaultGCInterval, GCDiskThreshold: executor.DefaultGCDiskThreshold,
	}
	var configFile string
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run an agent: register this machine's resources and run tasks",
		Long: `Run an agent. It registers this machine's resources (detected, or given with
--resources) and attributes with the leading master over NATS, runs the tasks frameworks
launch on it as processes in per-task sandboxes under --work-dir, and serves the sandboxes'
files over HTTP. Restarted on the same --work-dir, it reattaches to the tasks still running.

Example:
  allot agent --nats nats://10.0.0.1:4222,nats://10.0.0.2:4222 --work-dir /var/lib/allot-agent \
    --attributes rack=r1,zone=eu-1 --resources cpus=16000,mem=65536`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("allot agent runs an agent on this machine and takes no arguments (given %q); the cluster's agents are under allot agents, e.g. allot agents list", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				if err := loadConfigFile(configFile, &f, cmd); err != nil {
					return err
				}
			}
			cfg, err := f.config()
			if err != nil {
				return err
			}
			a, err := executor.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configFile, "config", "", "JSON config file; flags given on the command line win")
	fl.StringVar(&f.NATS, "nats", f.NATS, "NATS URLs of the masters, comma-separated")
	fl.StringVar(&f.NATSCA, "nats-ca", "", "PEM file of the CA that signed the NATS servers' certificates (NATS over TLS)")
	fl.StringVar(&f.NATSCert, "nats-cert", "", "PEM file of this agent's certificate, for NATS servers that verify clients")
	fl.StringVar(&f.Principal, "principal", "", "this agent's credential name, one of the masters' --agent-credentials (default: the one --nats-cert names, if any)")
	fl.StringVar(&f.Secret, "secret", "", "the secret of --principal (or $ALLOT_AGENT_SECRET)")
	fl.StringVar(&f.NATSKey, "nats-key", "", "PEM file of the key of --nats-cert")
	fl.StringVar(&f.SubjectPrefix, "subject-prefix", f.SubjectPrefix, "NATS subject prefix of the cluster")
	fl.StringVar(&f.WorkDir, "work-dir", "", "directory for the checkpoint and task sandboxes (required)")
	fl.StringVar(&f.Hostname, "hostname", "", "hostname to register (default: this machine's)")
	fl.StringVar(&f.Resources, "resources", "", "resources instead of detected ones: cpus=4000,mem=8192,ports=31000-32000")
	fl.StringVar(&f.Attributes, "attributes", "", "attributes added to the detected ones: rack=r1,zone=z1,ssd=true")
	fl.Func("devices", "GPU models by device index instead of detected ones (nvidia-smi): T4x4,A10; none for none", func(s string) error {
		f.Devices = &s
		return nil
	})
	fl.StringVar(&f.Isolation, "isolation", f.Isolation, "limits: auto (cgroups, v2 or v1, when usable), cgroups, portable")
	fl.StringVar(&f.HTTPAddr, "http", f.HTTPAddr, "file server listen address")
	fl.StringVar(&f.FilesToken, "files-token", "", "bearer token for the file server (default: generated)")
	fl.StringVar(&f.FilesSecret, "files-secret", "", "secret shared by all agents that keys tasks' framework file tokens, so tasks can read their framework's sandboxes on every agent (default: the files token, this agent only)")
	fl.DurationVar(&f.FilesTokenTTL, "files-token-ttl", f.FilesTokenTTL, "how long the files token each task gets (ALLOT_FILES_TOKEN) is valid after its launch")
	fl.StringVar(&f.TaskUser, "task-user", "", "user tasks run as when their command names none (default: the agent's own user); other users than its own need an agent running as root")
	fl.DurationVar(&f.DefaultGrace, "default-grace", f.DefaultGrace, "time between SIGTERM and SIGKILL when a task sets none")
	fl.DurationVar(&f.ResendInterval, "resend-interval", f.ResendInterval, "resend unacknowledged status updates this often")
	fl.IntVar(&f.ShuffleSlots, "shuffle-slots", f.ShuffleSlots, "shuffle transfers (file downloads naming a coflow) served at once; the others wait, in the order of the leader's coflow priorities")
	fl.Var(&f.ShuffleIngress, "shuffle-ingress", "bytes a second the shuffle transfers into this agent's tasks may bring together (100MB, or bytes; 0: unlimited); the senders ask for each chunk, granted in the order of the leader's coflow priorities")
	fl.Var(&f.ShuffleEgress, "shuffle-egress", "bytes a second the shuffle transfers may send together (100MB, or bytes; 0: unlimited), shared a chunk at a time in the order of the leader's coflow priorities")
	fl.DurationVar(&f.GCDelay, "gc-delay", 0, "keep the sandbox of a task that ended this long (default: --files-token-ttl, 24h)")
	fl.DurationVar(&f.GCInterval, "gc-interval", f.GCInterval, "check the sandboxes and the work dir's disk this often")
	fl.Float64Var(&f.GCDiskThreshold, "gc-disk-threshold", f.GCDiskThreshold, "fraction of the work dir's file system used past which ended sandboxes of frameworks shut down are removed before --gc-delay (1: never)")
	fl.Var(&f.GCDiskBudget, "gc-disk-budget", "bytes all sandboxes may take (10GB, 512MB, or bytes; 0: no budget) past which ended sandboxes of frameworks shut down are removed before --gc-delay")
	fl.StringVar(&f.LogLevel, "log-level", f.LogLevel, "trace, debug, info, warn or error")
	return cmd
}

// envAgentSecret holds the agent's secret when --secret is not given, so it
// need not appear on the command line.
const envAgentSecret = "ALLOT_AGENT_SECRET"

// config turns the settings into an executor.Config.
func (f agentFlags) config() (executor.Config, error) {
	var cfg executor.Config
	if f.WorkDir == "" {
		return cfg, fmt.Errorf("--work-dir is required")
	}
	res, err := parseResources(f.Resources)
	if err != nil {
		return cfg, fmt.Errorf("--resources: %w", err)
	}
	attrs, err := parseAttributes(f.Attributes)
	if err != nil {
		return cfg, fmt.Errorf("--attributes: %w", err)
	}
	var devices []string
	if f.Devices != nil {
		if devices, err = executor.ParseDevices(*f.Devices); err != nil {
			return cfg, fmt.Errorf("--devices: %w", err)
		}
		if devices == nil {
			devices = []string{} // none, not detected
		}
	}
	cfg = executor.Config{
		NATSURLs: splitList(f.NATS), NATSCA: f.NATSCA, NATSCert: f.NATSCert, NATSKey: f.NATSKey,
		Principal: f.Principal, Secret: cmp.Or(f.Secret, os.Getenv(envAgentSecret)),
		SubjectPrefix: f.SubjectPrefix, WorkDir: f.WorkDir,
		Hostname: f.Hostname, Resources: res, Attributes: attrs, Devices: devices, Isolation: runner.Isolation(f.Isolation),
		HTTPAddr: f.HTTPAddr, FilesToken: f.FilesToken, FilesSecret: f.FilesSecret, FilesTokenTTL: f.FilesTokenTTL,
		TaskUser: f.TaskUser, DefaultGrace: f.DefaultGrace,
		ResendInterval: f.ResendInterval, ShuffleSlots: f.ShuffleSlots, ShuffleEgress: int64(f.ShuffleEgress),
		ShuffleIngress: int64(f.ShuffleIngress),
		GCDelay:        f.GCDelay, GCInterval: f.GCInterval, GCDiskThreshold: f.GCDiskThreshold, GCDiskBudget: int64(f.GCDiskBudget),
		Logger: hclog.New(&hclog.LoggerOptions{Name: "allot", Level: hclog.LevelFromString(f.LogLevel), Output: os.Stderr}),
	}
	return cfg, cfg.Validate()
}

// parseResources reads name=value pairs: scalars in their integer units
// (cpus in milli-CPU, mem and disk in MiB) and ranges as lo-hi[+lo-hi].
func parseResources(s string) (protocol.Resources, error) {
	var r protocol.Resources
	for _, kv := range splitList(s) {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return r, fmt.Errorf("%q is not name=value", kv)
		}
		if strings.Contains(value, "-") {
			var ranges protocol.Ranges
			for _, part := range strings.Split(value, "+") {
				lo, hi, ok := strings.Cut(part, "-")
				l, err1 := strconv.ParseUint(lo, 10, 64)
				h, err2 := strconv.ParseUint(hi, 10, 64)
				if !ok || err1 != nil || err2 != nil {
					return r, fmt.Errorf("%s: %q is not a range lo-hi", name, part)
				}
				ranges = append(ranges, protocol.Range{Begin: l, End: h})
			}
			if r.Ranges == nil {
				r.Ranges = map[string]protocol.Ranges{}
			}
			r.Ranges[name] = ranges
			continue
		}
		v, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return r, fmt.Errorf("%s: %q is not an integer", name, value)
		}
		if r.Scalars == nil {
			r.Scalars = map[string]int64{}
		}
		r.Scalars[name] = v
	}
	return r, r.Validate()
}

// parseAttributes reads comma-separated name=value pairs: a number becomes
// a number attribute, {a,b} a set, anything else text.
func parseAttributes(s string) (protocol.Attributes, error) {
	attrs := protocol.Attributes{}
	var pairs []string
	depth, start := 0, 0
	for i, c := range s + "," {
		switch {
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case c == ',' && depth == 0:
			if p := strings.TrimSpace(s[start:min(i, len(s))]); p != "" {
				pairs = append(pairs, p)
			}
			start = i + 1
		}
	}
	for _, kv := range pairs {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%q is not name=value", kv)
		}
		attrs[strings.TrimSpace(name)] = protocol.ParseValue(strings.TrimSpace(value))
	}
	return attrs, nil
}
