package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/offers"
)

// masterFlags are the `allot master` settings; a config file (JSON with the
// same names) fills what the command line does not set.
type masterFlags struct {
	NodeID              string             `json:"node_id"`
	DataDir             string             `json:"data_dir"`
	RaftBind            string             `json:"raft_bind"`
	RaftAdvertise       string             `json:"raft_advertise"`
	RaftLogStore        string             `json:"raft_log_store"`
	Peers               string             `json:"peers"`
	Bootstrap           bool               `json:"bootstrap"`
	NATSListen          string             `json:"nats_listen"`
	NATSCluster         string             `json:"nats_cluster"`
	NATSRoutes          string             `json:"nats_routes"`
	NATSExternal        string             `json:"nats_external"`
	NATSMasterSecret    string             `json:"nats_master_secret"`
	NATSToken           string             `json:"nats_token"`
	NATSTLSCert         string             `json:"nats_tls_cert"`
	NATSTLSKey          string             `json:"nats_tls_key"`
	NATSTLSCA           string             `json:"nats_tls_ca"`
	NATSTLSVerify       bool               `json:"nats_tls_verify"`
	HTTPAddr            string             `json:"http"`
	RolesFile           string             `json:"roles_file"`
	Roles               map[string]float64 `json:"roles"`
	Policy              string             `json:"policy"`
	LeftoverOrder       string             `json:"leftover_order"`
	Placement           string             `json:"placement"`
	CoflowScheduler     string             `json:"coflow_scheduler"`
	AllocationInterval  time.Duration      `json:"allocation_interval"`
	Preemption          string             `json:"preemption"`
	PreemptionInterval  time.Duration      `json:"preemption_interval"`
	PreemptionDelay     time.Duration      `json:"preemption_delay"`
	PreemptionDeadline  time.Duration      `json:"preemption_deadline"`
	PreemptionMax       float64            `json:"preemption_max_fraction"`
	ShareUpdateInterval time.Duration      `json:"share_update_interval"`
	OfferTimeout        time.Duration      `json:"offer_timeout"`
	AgentHeartbeat      time.Duration      `json:"agent_heartbeat"`
	AgentTimeout        time.Duration      `json:"agent_timeout"`
	StatusRetry         time.Duration      `json:"status_retry_interval"`
	FilesSecret         string             `json:"files_secret"`
	FilesTokenTTL       time.Duration      `json:"files_token_ttl"`
	CredentialsFile     string             `json:"credentials_file"`
	AgentCredsFile      string             `json:"agent_credentials_file"`
	AgentsPerCredential int                `json:"agents_per_credential"`
	AgentQPS            float64            `json:"agent_qps"`
	AgentBurst          int                `json:"agent_burst"`
	RoleACLsFile        string             `json:"role_acls_file"`
	RunAsACLsFile       string             `json:"run_as_acls_file"`
	OperatorToken       string             `json:"operator_token"`
	FrameworkQPS        float64            `json:"framework_qps"`
	FrameworkBurst      int                `json:"framework_burst"`
	AgentRemovalLimit   float64            `json:"agent_removal_limit"`
	MaxHeartbeatsPerSec float64            `json:"max_heartbeats_per_second"`
	LogLevel            string             `json:"log_level"`
	EnableDebug         bool               `json:"enable_debug"`
	GCPercent           int                `json:"gc_percent"`
}

func masterCommand() *cobra.Command {
	def := master.DefaultConfig()
	f := masterFlags{
		RaftBind: def.Raft.BindAddr, NATSListen: "0.0.0.0:4222", NATSCluster: "0.0.0.0:6222",
		HTTPAddr: def.HTTPAddr, Policy: def.Policy, LeftoverOrder: def.LeftoverOrder, CoflowScheduler: def.CoflowScheduler, AllocationInterval: def.AllocationInterval,
		ShareUpdateInterval: def.ShareUpdateInterval, OfferTimeout: def.OfferTimeout, StatusRetry: def.StatusRetryInterval,
		AgentHeartbeat: def.AgentHeartbeat, AgentTimeout: def.AgentTimeout,
		FilesTokenTTL: def.FilesTokenTTL, AgentsPerCredential: def.MaxAgentsPerCredential, AgentQPS: def.AgentRateLimit.QPS, AgentBurst: def.AgentRateLimit.Burst,
		Preemption: def.Preemption.Policy, PreemptionInterval: def.Preemption.Interval, PreemptionDelay: def.Preemption.Delay,
		PreemptionDeadline: def.Preemption.Deadline, PreemptionMax: def.Preemption.MaxFraction,
		LogLevel: "info",
	}
	var configFile string
	cmd := &cobra.Command{
		Use:   "master",
		Short: "Run a master (one of a Raft trio)",
		Long: `Run a master. Three masters form a Raft group; each embeds a NATS server, and the
three servers form one NATS cluster (or all use external NATS servers).

Example, first of three:
  allot master --node-id m1 --data-dir /var/lib/allot \
    --raft-bind 10.0.0.1:7000 --peers m1=10.0.0.1:7000,m2=10.0.0.2:7000,m3=10.0.0.3:7000 \
    --bootstrap --nats-routes nats-route://10.0.0.2:6222,nats-route://10.0.0.3:6222`,
		Args: cobra.NoArgs,
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
			applyGCPercent(f.GCPercent, os.Getenv("GOGC")) // f.config checked it
			m, err := master.New(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return m.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configFile, "config", "", "JSON config file; flags given on the command line win")
	fl.StringVar(&f.NodeID, "node-id", "", "this master's permanent ID (required)")
	fl.StringVar(&f.DataDir, "data-dir", "", "directory for the Raft log and snapshots (required)")
	fl.StringVar(&f.RaftBind, "raft-bind", f.RaftBind, "Raft listen address")
	fl.StringVar(&f.RaftAdvertise, "raft-advertise", "", "Raft address peers use (default: the bind address)")
	fl.StringVar(&f.RaftLogStore, "raft-log-store", "", "the Raft log's format on disk: boltdb or wal (default: the one --data-dir holds; wal in a new one)")
	fl.StringVar(&f.Peers, "peers", "", "all masters as id=raft-addr,... (used to bootstrap)")
	fl.BoolVar(&f.Bootstrap, "bootstrap", false, "create the cluster from --peers if this node has no state yet")
	fl.StringVar(&f.NATSListen, "nats-listen", f.NATSListen, "embedded NATS client listen address")
	fl.StringVar(&f.NATSCluster, "nats-cluster", f.NATSCluster, "embedded NATS route listen address")
	fl.StringVar(&f.NATSRoutes, "nats-routes", "", "other masters' NATS route URLs, comma-separated")
	fl.StringVar(&f.NATSExternal, "nats-external", "", "use these NATS URLs instead of an embedded server")
	fl.StringVar(&f.NATSToken, "nats-token", "", "replaced by identities (docs/security.md)")
	_ = fl.MarkHidden("nats-token")
	fl.StringVar(&f.NATSMasterSecret, "nats-master-secret", "", "the masters' shared secret: each master connects to NATS with it, and routes between the masters' servers authenticate with it (required with credentials, unless --nats-tls-verify)")
	fl.StringVar(&f.NATSTLSCert, "nats-tls-cert", "", "PEM certificate: the embedded NATS server then speaks only TLS, to clients and routes, and the master presents it as a client")
	fl.StringVar(&f.NATSTLSKey, "nats-tls-key", "", "PEM key of --nats-tls-cert")
	fl.StringVar(&f.NATSTLSCA, "nats-tls-ca", "", "PEM CA that signed the NATS certificates (default: the system's roots)")
	fl.BoolVar(&f.NATSTLSVerify, "nats-tls-verify", false, "accept only NATS clients with a certificate --nats-tls-ca signed; a certificate naming an identity (URI allot:framework.NAME, allot:agent.NAME, allot:master.NAME) is that identity")
	fl.StringVar(&f.HTTPAddr, "http", f.HTTPAddr, "HTTP operator API listen address (empty disables)")
	fl.StringVar(&f.RolesFile, "roles", "", `JSON file of role weights, e.g. {"eng": 2, "eng/prod": 3}`)
	fl.StringVar(&f.Policy, "policy", f.Policy, "allocation policy: "+offers.PolicyHelp())
	fl.StringVar(&f.LeftoverOrder, "leftover-order", f.LeftoverOrder, "how the leftover pool is shared: jct-first or efficiency-first")
	fl.StringVar(&f.Placement, "placement", f.Placement, "which agents offers are built from: spread, first-fit or pack (docs/placement.md)")
	fl.StringVar(&f.CoflowScheduler, "coflow-scheduler", f.CoflowScheduler, "how the agents order shuffle transfers: philae, aalo, sebf, scf, fifo or fair")
	fl.DurationVar(&f.AllocationInterval, "allocation-interval", f.AllocationInterval, "time between allocation rounds (after a slow round, ten times its duration, up to ten intervals)")
	fl.StringVar(&f.Preemption, "preemption", f.Preemption, "what is taken back from roles above their share: off, guarantees (for roles below their guarantee, and lent resources for fair shares) or fair (also for fair shares)")
	fl.DurationVar(&f.PreemptionInterval, "preemption-interval", f.PreemptionInterval, "how often the leader decides what to take back")
	fl.DurationVar(&f.PreemptionDelay, "preemption-delay", f.PreemptionDelay, "how long a role must stay below its guarantee or fair share before anything is taken for it")
	fl.DurationVar(&f.PreemptionDeadline, "preemption-deadline", f.PreemptionDeadline, "the warning frameworks get before their tasks are preempted or revoked")
	fl.Float64Var(&f.PreemptionMax, "preemption-max-fraction", f.PreemptionMax, "most of the cluster's capacity of any resource newly taken back per decision (0 < f ≤ 1)")
	fl.DurationVar(&f.ShareUpdateInterval, "share-update-interval", f.ShareUpdateInterval, "how often fair shares are recomputed and changes sent to frameworks (0: every round)")
	fl.StringVar(&f.FilesSecret, "files-secret", "", "the agents' --files-secret: frameworks then get a token that reads their sandboxes on every agent")
	fl.DurationVar(&f.FilesTokenTTL, "files-token-ttl", f.FilesTokenTTL, "how long a framework's files token is valid; heartbeats bring fresh ones")
	fl.StringVar(&f.CredentialsFile, "credentials", "", `JSON file of framework credentials, {"principal": "secret", ...}: every NATS connection must then authenticate, and each may use only its own subjects`)
	fl.StringVar(&f.AgentCredsFile, "agent-credentials", "", `JSON file of agent credentials, {"name": "secret", ...}: an agent connects with one (allot agent --principal, --secret)`)
	fl.IntVar(&f.AgentsPerCredential, "agents-per-credential", f.AgentsPerCredential, "agents one agent credential may hold registered at once (0: no cap)")
	fl.Float64Var(&f.AgentQPS, "agent-qps", f.AgentQPS, "calls per second the agents of one credential may make (0: no limit)")
	fl.IntVar(&f.AgentBurst, "agent-burst", f.AgentBurst, "calls an agent credential may make at once above --agent-qps")
	fl.StringVar(&f.RunAsACLsFile, "run-as-acls", "", `JSON file of the Unix users each principal's tasks may run as, {"principal": ["alice", "nobody"], "ops": ["*"]} (default: any user)`)
	fl.StringVar(&f.RoleACLsFile, "role-acls", "", `JSON file of the roles each principal may subscribe into, {"principal": ["eng/prod", "research/*", ...]}`)
	fl.StringVar(&f.OperatorToken, "operator-token", "", "bearer token the operator API's actions (draining agents) need (default: none needed)")
	fl.Float64Var(&f.FrameworkQPS, "framework-qps", 0, "calls per second each principal's frameworks may make together (0: no limit); more are refused as rate limited")
	fl.IntVar(&f.FrameworkBurst, "framework-burst", 0, "calls a principal may make at once above --framework-qps (default: one second's worth)")
	fl.DurationVar(&f.OfferTimeout, "offer-timeout", f.OfferTimeout, "rescind offers held longer (0: never)")
	fl.DurationVar(&f.AgentHeartbeat, "agent-heartbeat", f.AgentHeartbeat, "how often each agent heartbeats while the agents are few (see --max-heartbeats-per-second)")
	fl.DurationVar(&f.AgentTimeout, "agent-timeout", f.AgentTimeout, "mark an agent unreachable after this long without a heartbeat (at least three heartbeat intervals)")
	fl.DurationVar(&f.StatusRetry, "status-retry-interval", f.StatusRetry, "send a status update again when a connected framework has not acknowledged it this long (then twice as long each time, up to 10m)")
	fl.Float64Var(&f.MaxHeartbeatsPerSec, "max-heartbeats-per-second", def.MaxHeartbeatsPerSecond, "the agents' heartbeats the leader asks for, all together: past this, each agent heartbeats less often and its timeout grows (0: one a second each)")
	fl.Float64Var(&f.AgentRemovalLimit, "agent-removal-limit", 0, "when more than this fraction of the agents miss their heartbeats at once, mark none unreachable until fewer do (0: no limit)")
	fl.IntVar(&f.GCPercent, "gc-percent", 0, fmt.Sprintf("the Go garbage collector's target, as GOGC (0: %d, or the GOGC environment variable when set)", masterGCPercent))
	fl.BoolVar(&f.EnableDebug, "enable-debug", false, "serve the Go runtime's profiles under /debug/pprof/ on --http, to the operator only")
	fl.StringVar(&f.LogLevel, "log-level", f.LogLevel, "trace, debug, info, warn or error")
	return cmd
}

// config turns the settings into a master.Config.
func (f masterFlags) config() (master.Config, error) {
	cfg := master.DefaultConfig()
	if f.NodeID == "" || f.DataDir == "" {
		return cfg, fmt.Errorf("--node-id and --data-dir are required")
	}
	cfg.Raft.NodeID, cfg.Raft.DataDir = f.NodeID, f.DataDir
	cfg.Raft.BindAddr, cfg.Raft.AdvertiseAddr = f.RaftBind, f.RaftAdvertise
	cfg.Raft.LogStore = f.RaftLogStore
	cfg.Raft.Bootstrap = f.Bootstrap
	for _, p := range splitList(f.Peers) {
		id, addr, ok := strings.Cut(p, "=")
		if !ok || id == "" || addr == "" {
			return cfg, fmt.Errorf("--peers: %q is not id=address", p)
		}
		cfg.Raft.Peers = append(cfg.Raft.Peers, master.Peer{ID: id, Address: addr})
	}
	if ext := splitList(f.NATSExternal); len(ext) > 0 {
		cfg.NATS.External = ext
	} else {
		var err error
		if cfg.NATS.Host, cfg.NATS.Port, err = hostPort(f.NATSListen); err != nil {
			return cfg, fmt.Errorf("--nats-listen: %w", err)
		}
		if cfg.NATS.ClusterHost, cfg.NATS.ClusterPort, err = hostPort(f.NATSCluster); err != nil {
			return cfg, fmt.Errorf("--nats-cluster: %w", err)
		}
		cfg.NATS.Routes = splitList(f.NATSRoutes)
	}
	if f.NATSToken != "" {
		return cfg, fmt.Errorf("--nats-token: a shared NATS token no longer admits anyone: give the masters " +
			"--nats-master-secret, and frameworks and agents their own credentials (--credentials, --agent-credentials; docs/security.md)")
	}
	cfg.NATS.MasterSecret = f.NATSMasterSecret
	cfg.MaxAgentsPerCredential = f.AgentsPerCredential
	cfg.AgentRateLimit = master.RateLimit{QPS: f.AgentQPS, Burst: f.AgentBurst}
	cfg.NATS.TLS = master.NATSTLS{Cert: f.NATSTLSCert, Key: f.NATSTLSKey, CA: f.NATSTLSCA, VerifyClients: f.NATSTLSVerify}
	cfg.OperatorToken = f.OperatorToken
	cfg.EnableDebug = f.EnableDebug
	if _, _, err := gcPercent(f.GCPercent, ""); err != nil {
		return cfg, err
	}
	cfg.AgentRemovalLimit = f.AgentRemovalLimit
	cfg.MaxHeartbeatsPerSecond = f.MaxHeartbeatsPerSec
	cfg.FrameworkRateLimit = master.RateLimit{QPS: f.FrameworkQPS, Burst: f.FrameworkBurst}
	if cfg.FrameworkRateLimit.Burst == 0 {
		cfg.FrameworkRateLimit.Burst = int(max(1, f.FrameworkQPS))
	}
	cfg.HTTPAddr = f.HTTPAddr
	cfg.Policy = f.Policy
	cfg.LeftoverOrder = f.LeftoverOrder
	cfg.Placement = f.Placement
	cfg.CoflowScheduler = f.CoflowScheduler
	cfg.AllocationInterval, cfg.OfferTimeout = f.AllocationInterval, f.OfferTimeout
	cfg.AgentHeartbeat, cfg.AgentTimeout = f.AgentHeartbeat, f.AgentTimeout
	cfg.ShareUpdateInterval = f.ShareUpdateInterval
	cfg.Preemption = master.PreemptionConfig{Policy: f.Preemption, Interval: f.PreemptionInterval, Delay: f.PreemptionDelay,
		Deadline: f.PreemptionDeadline, MaxFraction: f.PreemptionMax}
	cfg.StatusRetryInterval = f.StatusRetry
	cfg.FilesSecret = f.FilesSecret
	cfg.FilesTokenTTL = f.FilesTokenTTL
	cfg.Roles = map[string]float64{}
	for k, v := range f.Roles {
		cfg.Roles[k] = v
	}
	if err := readJSONFile("--roles", f.RolesFile, &cfg.Roles); err != nil {
		return cfg, err
	}
	if err := readJSONFile("--credentials", f.CredentialsFile, &cfg.Credentials); err != nil {
		return cfg, err
	}
	if f.CredentialsFile != "" && len(cfg.Credentials) == 0 {
		return cfg, fmt.Errorf("--credentials %s: no credentials", f.CredentialsFile)
	}
	if err := readJSONFile("--agent-credentials", f.AgentCredsFile, &cfg.AgentCredentials); err != nil {
		return cfg, err
	}
	if f.AgentCredsFile != "" && len(cfg.AgentCredentials) == 0 {
		return cfg, fmt.Errorf("--agent-credentials %s: no credentials", f.AgentCredsFile)
	}
	if err := readJSONFile("--role-acls", f.RoleACLsFile, &cfg.RoleACLs); err != nil {
		return cfg, err
	}
	if f.RoleACLsFile != "" && cfg.RoleACLs == nil {
		cfg.RoleACLs = map[string][]string{} // a file of no principals allows nobody
	}
	if err := readJSONFile("--run-as-acls", f.RunAsACLsFile, &cfg.RunAsACLs); err != nil {
		return cfg, err
	}
	if f.RunAsACLsFile != "" && cfg.RunAsACLs == nil {
		cfg.RunAsACLs = map[string][]string{}
	}
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "allot", Level: hclog.LevelFromString(f.LogLevel), Output: os.Stderr})
	return cfg, cfg.Validate()
}

// readJSONFile decodes the JSON file at path (a flag's value) into into;
// an empty path reads nothing.
func readJSONFile(flag, path string, into any) error {
	if path == "" {
		return nil
	}
	if err := decodeJSONFile(path, into); err != nil {
		return fmt.Errorf("%s %w", flag, err)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func hostPort(s string) (string, int, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, err
	}
	return host, n, nil
}
