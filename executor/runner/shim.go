//go:build linux

package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/allot-project/allot/protocol"
)

// reapTimeout bounds the wait for the task's leftover processes after it
// exited and they were killed.
const reapTimeout = 2 * time.Second

// readyFD is the descriptor of the pipe on which the shim reports to Start.
const readyFD = 3

// ShimMain is the shim's main function: the `allot task-shim` command calls
// it with the arguments the runner appended to Config.Shim (the task's
// control directory) and exits with its result. The shim reads spec.json
// there, starts the task as its user, supervises it (kills on SIGTERM,
// limits) and records its exit in exit.json there. It returns 0 once it
// recorded an exit, including a failure to start, and non-zero if it could
// not. Given a sandbox with a legacy control directory instead, as agents
// of earlier versions did, it uses that one.
func ShimMain(args []string) int {
	log := hclog.New(&hclog.LoggerOptions{Name: "task-shim", Output: os.Stderr, Level: hclog.Info})
	if len(args) != 1 {
		log.Error("usage: task-shim <control dir>")
		return 2
	}
	// Signals first: a kill may come as soon as Start returns.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP)
	s := &shim{ctl: shimControl(args[0]), log: log, sigs: sigs, ready: os.NewFile(readyFD, "ready")}
	// The task must not inherit the pipe, or Start would wait for it too.
	syscall.CloseOnExec(readyFD)
	if err := s.run(); err != nil {
		log.Error("shim failed", "error", err)
		s.report(readyMsg{Error: err.Error()})
		return 1
	}
	return 0
}

// shim supervises one task.
type shim struct {
	ctl     string // the control directory
	sandbox string
	log     hclog.Logger
	sigs    chan os.Signal
	ready   *os.File
	spec    shimSpec
	rec     shimRecord
	iso     isolator
	// stderr is the task's stderr as the shim opened it: the tail of a
	// failure is read from it rather than by name, which the task may
	// have pointed elsewhere.
	stderr *os.File
}

func (s *shim) run() error {
	if err := readJSON(control(s.ctl, specFile), &s.spec); err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	s.sandbox = s.spec.Sandbox
	if s.sandbox == "" {
		s.sandbox = filepath.Dir(s.ctl) // a legacy spec, in <sandbox>/.allot
	}
	s.log = s.log.With("task_id", s.spec.TaskID)
	start, err := procStart(os.Getpid())
	if err != nil {
		return err
	}
	s.rec = shimRecord{ShimPid: os.Getpid(), ShimStart: start, CgroupMount: s.spec.CgroupMount, CgroupGroup: s.spec.CgroupGroup, CgroupV1: s.spec.CgroupV1}
	if err := writeJSONAtomic(control(s.ctl, shimFile), s.rec); err != nil {
		return err
	}
	// Orphaned descendants of the task are reparented to the shim, so the
	// memory watch and kills still find them.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		s.log.Warn("cannot become a subreaper", "error", err)
	}
	switch {
	case s.spec.Isolation == IsolationCgroups && len(s.spec.CgroupV1) > 0:
		s.iso = newCgroupV1Iso(s.log, s.spec)
	case s.spec.Isolation == IsolationCgroups:
		s.iso = newCgroupIso(s.log, s.spec)
	default:
		s.iso = newPortable(s.log, s.spec.Limits)
	}
	cmd, err := s.command()
	if err != nil {
		s.iso.cleanup()
		return s.failed(err)
	}
	if err := cmd.Start(); err != nil {
		s.iso.cleanup()
		return s.failed(err)
	}
	pid := cmd.Process.Pid
	// Not reaped yet, so its stat is there even if it already exited.
	s.rec.TaskPid = pid
	s.rec.TaskStart, _ = procStart(pid)
	exited, reaped := make(chan syscall.WaitStatus, 1), make(chan struct{})
	go reap(pid, exited, reaped)
	if err := writeJSONAtomic(control(s.ctl, shimFile), s.rec); err != nil {
		s.log.Error("cannot record the task's pid", "error", err)
	}
	s.iso.started(pid)
	s.log.Info("task started", "pid", pid, "isolation", s.spec.Isolation, "user", s.spec.User.name())
	s.report(readyMsg{TaskPid: pid})

	e := s.supervise(exited)
	s.iso.killAll()
	select {
	case <-reaped:
	case <-time.After(reapTimeout):
		s.log.Warn("task processes remain after the kill")
	}
	_ = cmd.Process.Release()
	e.MemPeak = s.iso.memPeak()
	s.iso.cleanup()
	s.log.Info("task ended", "code", e.logCode(), "signal", e.Signal, "reason", e.Reason)
	return writeJSONAtomic(control(s.ctl, exitFile), e)
}

// command builds the task's command, isolated.
func (s *shim) command() (*exec.Cmd, error) {
	path, argv, err := resolveCommand(s.spec, s.sandbox)
	if err != nil {
		return nil, err
	}
	if err := setOpenFiles(s.spec.Limits.OpenFiles); err != nil {
		return nil, err
	}
	stdout, err := openOutput(s.sandbox, stdoutFile, s.spec.User)
	if err != nil {
		return nil, err
	}
	stderr, err := openOutput(s.sandbox, stderrFile, s.spec.User)
	if err != nil {
		stdout.Close()
		return nil, err
	}
	s.stderr = stderr
	// The child has its own copies once started; ours close with the shim.
	// The shim stays root, to kill and to account; only the task's process
	// takes the user's IDs, before it changes into the sandbox.
	cmd := &exec.Cmd{
		Path: path, Args: argv, Env: s.spec.Env, Dir: s.sandbox,
		Stdout: stdout, Stderr: stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: s.spec.User.Sys()},
	}
	if err := s.iso.prepare(cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// supervise handles kills and limits until the task's process exits and
// returns its Exit.
func (s *shim) supervise(exited <-chan syscall.WaitStatus) Exit {
	var (
		killed, escalated bool
		overMsg           string
		escalate          <-chan time.Time
	)
	for {
		select {
		case <-s.sigs:
			if killed {
				continue
			}
			killed = true
			var req killRequest
			if err := readJSON(control(s.ctl, killFile), &req); err == nil && req.Grace > 0 {
				s.spec.Grace = req.Grace
			}
			s.log.Info("killing task", "grace", s.spec.Grace)
			s.iso.signal(syscall.SIGTERM)
			escalate = time.After(s.spec.Grace)
		case <-escalate:
			escalate, escalated = nil, true
			s.log.Info("grace period over, sending SIGKILL")
			s.iso.killAll()
		case msg := <-s.iso.overLimit():
			overMsg = msg
			s.log.Info("memory limit exceeded, killing task", "detail", msg)
			s.iso.killAll()
		case ws := <-exited:
			e := Exit{EndedAt: time.Now()}
			switch {
			case ws.Exited():
				code := ws.ExitStatus()
				e.Code = &code
			case ws.Signaled():
				e.Signal = unix.SignalName(ws.Signal())
			}
			if overMsg == "" {
				overMsg = s.iso.oomKilled()
			}
			switch {
			case overMsg != "":
				e.Reason, e.Message = protocol.ReasonMemoryLimit, overMsg
			case killed:
				e.Reason, e.Message = protocol.ReasonKilledByFramework, "killed: SIGTERM sent"
				if escalated {
					e.Message = fmt.Sprintf("killed: SIGTERM sent, SIGKILL after the %s grace period", s.spec.Grace)
				}
			case e.Code == nil || *e.Code != 0:
				if s.stderr != nil {
					e.Message = tailOf(s.stderr, tailSize)
				}
				if e.Message == "" {
					e.Message = describe(e)
				}
			}
			return e
		}
	}
}

// failed records that the task could not start and reports it to Start.
func (s *shim) failed(cause error) error {
	msg := cause.Error()
	if errors.Is(cause, errNotFound) {
		msg = "command not found: " + msg
	}
	e := Exit{Reason: protocol.ReasonCommandFailed, Message: msg, EndedAt: time.Now()}
	if err := writeJSONAtomic(control(s.ctl, exitFile), e); err != nil {
		return err
	}
	s.log.Info("task did not start", "error", msg)
	s.report(readyMsg{Error: msg})
	return nil
}

// report sends msg to Start, once; later calls do nothing.
func (s *shim) report(msg readyMsg) {
	if s.ready == nil {
		return
	}
	data, _ := json.Marshal(msg)
	if _, err := s.ready.Write(data); err != nil {
		s.log.Debug("cannot report to the agent", "error", err)
	}
	s.ready.Close()
	s.ready = nil
}

// reap waits for every child of the shim, which is a subreaper, and sends
// the task's status on exited. It returns when no children are left.
func reap(task int, exited chan<- syscall.WaitStatus, done chan<- struct{}) {
	defer close(done)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		if pid == task {
			exited <- ws
		}
	}
}

// setOpenFiles sets RLIMIT_NOFILE, which the task inherits, to n (capped
// at the hard limit); 0 leaves it.
func setOpenFiles(n uint64) error {
	if n == 0 {
		return nil
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	n = min(n, lim.Max)
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n})
}

// describe says how a process ended, for an Exit without stderr.
func describe(e Exit) string {
	if e.Code != nil {
		return fmt.Sprintf("exit status %d", *e.Code)
	}
	return "killed by " + e.Signal
}
