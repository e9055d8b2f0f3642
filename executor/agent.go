package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/executor/runner"
	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// Agent is the allot agent daemon: it registers with the leading master,
// heartbeats, runs the tasks it is told to launch, reports their status
// updates reliably, checkpoints to its work directory, and serves its
// tasks' sandboxes over HTTP. Create it with New and run it with Run.
type Agent struct {
	cfg    Config
	log    hclog.Logger
	subj   protocol.Subjects
	total  protocol.Resources
	attrs  protocol.Attributes
	ckpt   checkpoint
	runner *runner.Runner
	files  http.Handler
	req    requester
	// shuffle orders the file server's shuffle transfers and reports
	// their progress (shuffle.go, shuffle_report.go).
	shuffle *shuffleServer
	// journal is the task journal. The flusher (flusher.go) owns it from
	// startFlusher to stopFlusher; ckptWake wakes it, closing ckptStop
	// stops it, and ckptDone is closed once it has stopped.
	journal  *journal
	ckptWake chan struct{}
	ckptStop chan struct{}
	ckptDone chan struct{}

	ran   atomic.Bool
	ready chan struct{}

	// mu guards everything below. Task record changes are queued under it
	// and written by the flusher; an update is sent only once its record
	// change is on disk.
	mu         sync.Mutex
	id         protocol.AgentID
	heartbeat  time.Duration
	listenAddr string
	advertise  string
	nc         *nats.Conn
	cmdSub     *nats.Subscription
	subs       []*nats.Subscription
	tasks      map[taskKey]*task
	ended      map[taskKey]endedTask
	endedOrder []taskKey
	// registered is true while the leader knows the agent: updates are sent
	// only then. rereg asks for a reregistration.
	registered bool
	rereg      bool
	leader     protocol.LeaderAnnouncement
	// term is the highest leader term seen, in announcements and commands:
	// commands of an older term are dropped (commands.go).
	term     uint64
	stopping bool
	srv      *http.Server
	// pending holds the journal entries queued for the flusher, one per
	// record name at most (pendingAt indexes them). seq numbers the record
	// changes; those up to durable are on disk. committed is closed, and
	// replaced, whenever durable advances.
	pending   []journalEntry
	pendingAt map[string]int
	seq       uint64
	durable   uint64
	committed chan struct{}

	wake chan struct{} // wakes the sender
	// startSlots bounds the tasks starting at once.
	startSlots chan struct{}
	poke       chan struct{} // wakes the session loop (heartbeat or reregister now)
	wg         sync.WaitGroup
	srvWG      sync.WaitGroup
}

// New checks cfg, fills in its defaults, creates the work directory,
// detects resources and attributes as configured, and prepares the task
// runner and the file server. It starts nothing.
func New(cfg Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("%w: work dir: %w", ErrConfig, err)
	}
	cfg.WorkDir = dir
	log := cfg.Logger.Named("agent")
	ck := checkpoint{dir: dir, log: log}
	if err := ck.init(); err != nil {
		return nil, err
	}
	total := cfg.Resources.Clone()
	if total.IsEmpty() {
		if total, err = DetectResources(dir); err != nil {
			return nil, err
		}
	}
	attrs := DetectAttributes()
	attrs["hostname"] = protocol.Text(cfg.Hostname)
	devices := cfg.Devices
	if devices == nil {
		devices = DetectGPUs(context.Background())
	}
	total = withGPUs(total, attrs, devices)
	maps.Copy(attrs, cfg.Attributes)
	if err := (protocol.RegisterRequest{Hostname: cfg.Hostname, Resources: total, Attributes: attrs, Version: cfg.Version}).Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rn, err := runner.New(runner.Config{
		WorkDir: filepath.Join(dir, sandboxDir), ControlDir: filepath.Join(dir, controlDir), Shim: cfg.Shim, ShimEnv: cfg.ShimEnv,
		Isolation: cfg.Isolation, DefaultGrace: cfg.DefaultGrace, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("task runner: %w", err)
	}
	shuffle := &shuffleServer{gate: newShuffleGate(cfg.ShuffleSlots), report: newShuffleReporter()}
	fh, err := files.NewHandler(files.Config{
		Root: filepath.Join(dir, sandboxDir), Token: cfg.FilesToken, Secret: cfg.FilesSecret, Shuffle: shuffle, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("file server: %w", err)
	}
	a := &Agent{
		cfg:        cfg,
		log:        log,
		subj:       protocol.Subjects{Prefix: cfg.SubjectPrefix},
		total:      total,
		attrs:      attrs,
		ckpt:       ck,
		runner:     rn,
		files:      fh,
		shuffle:    shuffle,
		ready:      make(chan struct{}),
		tasks:      map[taskKey]*task{},
		ended:      map[taskKey]endedTask{},
		wake:       make(chan struct{}, 1),
		startSlots: make(chan struct{}, max(4, 2*runtime.NumCPU())),
		poke:       make(chan struct{}, 1),
		ckptWake:   make(chan struct{}, 1),
		ckptStop:   make(chan struct{}),
		ckptDone:   make(chan struct{}),
		pendingAt:  map[string]int{},
		committed:  make(chan struct{}),
	}
	return a, nil
}

// Run runs the agent until ctx is done: it loads the checkpoint, starts
// the file server, connects to NATS, reattaches the tasks that survived a
// previous run, registers (or, with a checkpointed ID, reregisters), and
// then follows the master's commands. A cancelled ctx is a graceful stop:
// tasks keep running (their shims are detached) and the checkpoint holds
// everything a later Run on the same work directory needs; Run then
// returns nil once every goroutine it started has exited. Run may be
// called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.ran.CompareAndSwap(false, true) {
		return ErrAlreadyRun
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lock, err := lockWorkDir(ctx, filepath.Join(a.cfg.WorkDir, lockFile), lockWait)
	if err != nil {
		return err
	}
	defer lock.Close()
	err = a.start(runCtx)
	if err == nil {
		a.log.Info("agent running", "agent_id", a.ID(), "hostname", a.cfg.Hostname, "http_addr", a.HTTPAddr(),
			"resources", a.total.String(), "isolation", a.runner.Isolation())
		close(a.ready)
		a.wg.Add(3)
		go a.sessionLoop(runCtx)
		go a.sendLoop(runCtx)
		go a.shuffleReportLoop(runCtx)
		<-runCtx.Done()
	}
	stopped := ctx.Err() != nil
	cancel()
	a.shutdown()
	if err != nil && stopped && errors.Is(err, context.Canceled) {
		err = nil // stopped while registering
	}
	if err == nil {
		a.log.Info("agent stopped", "agent_id", a.ID())
	}
	return err
}

// start brings the agent up to its first successful registration.
func (a *Agent) start(ctx context.Context) error {
	rec, found, err := a.ckpt.loadAgent()
	if err != nil {
		return err
	}
	if found {
		a.mu.Lock()
		a.id = rec.AgentID
		a.mu.Unlock()
	}
	j, recs, err := a.ckpt.openTasks()
	if err != nil {
		return err
	}
	a.startFlusher(j)
	if err := a.startHTTP(); err != nil {
		return err
	}
	if err := a.connect(ctx); err != nil {
		return err
	}
	if err := a.subscribe(a.subj.Leader(), func(m *nats.Msg) { a.onLeader(m) }); err != nil {
		return err
	}
	a.recoverTasks(ctx, recs)
	if !found && a.hasTasks() {
		// Records without an agent ID: the agent was abandoned midway.
		a.log.Warn("task records without an agent id; killing those tasks")
		if err := a.abandon(ctx); err != nil {
			return err
		}
	}
	return a.join(ctx)
}

func (a *Agent) hasTasks() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tasks) > 0
}

// connect dials NATS unless a connection was given. While no server
// answers (the masters not up yet) it tries again, more slowly each time,
// until ctx ends; any other failure ends it at once.
func (a *Agent) connect(ctx context.Context) error {
	nc := a.cfg.NATSConn
	if nc == nil {
		var err error
		opts := append(natsclient.Options(), nats.Name("allot-agent-"+a.cfg.Hostname),
			// Commands sent while the connection was down, or stuck on a
			// server that stopped answering, are lost: reregistering has
			// the leader send again the launches this agent never saw.
			nats.ReconnectHandler(func(*nats.Conn) {
				a.mu.Lock()
				known := a.id != ""
				a.mu.Unlock()
				if known {
					a.log.Info("NATS connection back; reregistering")
					a.wantReregister()
				}
			}))
		if a.cfg.NATSCA != "" {
			opts = append(opts, nats.RootCAs(a.cfg.NATSCA))
		}
		if a.cfg.NATSCert != "" || a.cfg.NATSKey != "" {
			opts = append(opts, nats.ClientCert(a.cfg.NATSCert, a.cfg.NATSKey))
		}
		if a.cfg.NATSCA != "" || a.cfg.NATSCert != "" {
			opts = append(opts, nats.Secure())
		}
		if a.cfg.Secret != "" {
			user := protocol.Identity{Kind: protocol.KindAgent, Name: a.cfg.Principal}.String()
			opts = append(opts, nats.UserInfo(user, a.cfg.Secret))
		}
		// Replies come on the credential's own inbox subjects, the only
		// ones its connection may read where connections are authenticated.
		opts = append(opts, nats.CustomInboxPrefix(a.subj.Inbox(protocol.KindAgent, a.cfg.Principal)))
		urls := joinURLs(a.cfg.NATSURLs)
		for pause := connectPause; ; pause = min(2*pause, maxConnectPause) {
			nc, err = nats.Connect(urls, opts...)
			if err == nil {
				break
			}
			if !errors.Is(err, nats.ErrNoServers) {
				return fmt.Errorf("connect to NATS at %s: %w", urls, err)
			}
			a.log.Warn("no NATS server answers yet; trying again", "urls", urls, "retry_in", pause, "error", err)
			select {
			case <-ctx.Done():
				return fmt.Errorf("connect to NATS at %s: %w (gave up: %v)", urls, err, ctx.Err())
			case <-time.After(pause):
			}
		}
	}
	a.mu.Lock()
	a.nc = nc
	a.mu.Unlock()
	a.req = newRequester(nc, a.subj, a.cfg.RequestTimeout, a.cfg.Principal)
	return nil
}

// connectPause and maxConnectPause pace the tries to reach NATS.
const (
	connectPause    = 500 * time.Millisecond
	maxConnectPause = 5 * time.Second
)

func joinURLs(urls []string) string {
	s := ""
	for i, u := range urls {
		if i > 0 {
			s += ","
		}
		s += u
	}
	return s
}

// subscribe subscribes h to subject; the handler runs only while the
// agent is not stopping, and is waited for on shutdown.
func (a *Agent) subscribe(subject string, h func(*nats.Msg)) error {
	sub, err := a.nc.Subscribe(subject, a.guard(h))
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", subject, err)
	}
	a.mu.Lock()
	a.subs = append(a.subs, sub)
	a.mu.Unlock()
	return nil
}

// guard wraps a message handler so it never runs after shutdown began,
// is waited for, and cannot crash the agent.
func (a *Agent) guard(h func(*nats.Msg)) nats.MsgHandler {
	return func(m *nats.Msg) {
		a.mu.Lock()
		if a.stopping {
			a.mu.Unlock()
			return
		}
		a.wg.Add(1)
		a.mu.Unlock()
		defer a.wg.Done()
		defer func() {
			if r := recover(); r != nil {
				a.log.Error("message handler panicked", "subject", m.Subject, "panic", fmt.Sprint(r))
			}
		}()
		h(m)
	}
}

// shutdown stops handlers, waits for every goroutine, writes the task
// records still queued, and closes what Run opened. Tasks keep running.
func (a *Agent) shutdown() {
	a.mu.Lock()
	a.stopping = true
	subs := a.subs
	if a.cmdSub != nil {
		subs = append(subs, a.cmdSub)
	}
	a.subs, a.cmdSub = nil, nil
	nc := a.nc
	a.mu.Unlock()
	// Waiting transfers are answered now rather than cut when the file
	// server stops.
	a.shuffle.gate.stop()
	for _, s := range subs {
		if err := s.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			a.log.Debug("unsubscribe", "subject", s.Subject, "error", err)
		}
	}
	a.wg.Wait()
	// The tasks run on; the next agent on this work dir watches them.
	a.runner.Close()
	a.stopFlusher()
	a.stopHTTP()
	if nc != nil && a.cfg.NATSConn == nil {
		nc.Close()
	}
}

// Ready is closed once the agent is registered (or reregistered) with the
// leader for the first time.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// ID returns the agent ID: the checkpointed one, or the one the master
// assigned; empty before either is known.
func (a *Agent) ID() protocol.AgentID {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.id
}

// HTTPAddr returns the file server's actual listen address (host:port);
// empty before Run started it.
func (a *Agent) HTTPAddr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.listenAddr
}

// FilesToken returns the bearer token the file server requires.
func (a *Agent) FilesToken() string { return a.cfg.FilesToken }

// Resources returns the agent's total resources.
func (a *Agent) Resources() protocol.Resources { return a.total.Clone() }

// Attributes returns the agent's attributes, detected and configured.
func (a *Agent) Attributes() protocol.Attributes { return maps.Clone(a.attrs) }

// WorkDir returns the agent's absolute work directory.
func (a *Agent) WorkDir() string { return a.cfg.WorkDir }

// SandboxRoot returns the directory holding the task sandboxes, the root
// of the file server.
func (a *Agent) SandboxRoot() string { return filepath.Join(a.cfg.WorkDir, sandboxDir) }

// kick wakes the sender.
func (a *Agent) kick() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// pokeSession wakes the session loop (heartbeat or reregister now).
func (a *Agent) pokeSession() {
	select {
	case a.poke <- struct{}{}:
	default:
	}
}
