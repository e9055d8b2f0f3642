package executor

import (
	"context"
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
	// tasks is the agent's tasks, their update queues and their way to
	// disk, under a lock of its own (task_store.go).
	tasks *taskStore
	// gc removes the sandboxes of ended tasks (sandbox_gc.go), with its
	// own state and lock.
	gc *sandboxGC
	// id is the agent ID: written under mu, read anywhere.
	id agentID

	ran   atomic.Bool
	ready chan struct{}

	// mu guards the session: everything below. The task store's lock is
	// taken inside it when both are needed, never the other way round.
	mu         sync.Mutex
	heartbeat  time.Duration
	listenAddr string
	advertise  string
	nc         *nats.Conn
	cmdSub     *nats.Subscription
	ingressSub *nats.Subscription // the shuffle ingress's, with an ingress capacity
	subs       []*nats.Subscription
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
	wake     chan struct{} // wakes the sender
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
	shuffle := newShuffleServer(cfg, log.Named("shuffle"))
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
		gc:         newSandboxGC(cfg, log),
		ready:      make(chan struct{}),
		wake:       make(chan struct{}, 1),
		startSlots: make(chan struct{}, max(4, 2*runtime.NumCPU())),
		poke:       make(chan struct{}, 1),
	}
	a.tasks = newTaskStore(newRecordLog(log, a.kick))
	shuffle.asker.self, shuffle.asker.ask, shuffle.asker.tell = a.ID, a.askIngress, a.tellIngress
	return a, nil
}

// Ready is closed once the agent is registered (or reregistered) with the
// leader for the first time.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// ID returns the agent ID: the checkpointed one, or the one the master
// assigned; empty before either is known.
func (a *Agent) ID() protocol.AgentID { return a.id.load() }

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
