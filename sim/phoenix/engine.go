package phoenix

import (
	"math/rand/v2"

	"github.com/allot-project/allot/internal/heapq"
	"github.com/allot-project/allot/protocol"
)

// The event loop of the Phoenix simulator: a binary heap of events ordered
// by time, then by insertion, so equal-time events run in the order they
// were scheduled and a run is a pure function of its configuration.

type eventKind uint8

const (
	evArrive  eventKind = iota // job submitted
	evProbe                    // reservation reaches a worker
	evRefused                  // refused reservation back at its scheduler
	evGetTask                  // late-binding request reaches the scheduler
	evFree                     // no-op reply or stolen work back at the worker: slot free again
	evTaskEnd                  // task finished on a worker
	evTick                     // CRV period
)

type event struct {
	at     float64
	seq    uint64
	kind   eventKind
	worker int32
	job    *job
	resv   *reservation
}

// job is one job of the trace during a run: what admission made of its
// constraints and how far it got.
type job struct {
	id      int
	spec    *jobSpec
	hard    []protocol.Constraint // hard constraints of the trace (checked at every start)
	classes []int                 // effective classes (hard and kept soft)
	relaxed []protocol.Constraint // soft constraints admission dropped
	sig     *signature
	pref    *signature // effective plus relaxed, when PREFER_RELAXED and nonempty
	next    int        // next unlaunched task
	done    int
	remain  float64 // estimated remaining work (est x unlaunched)
	waitSum float64 // sum of task queuing times
	finish  float64
	reject  bool
}

func (j *job) tasks() int       { return len(j.spec.durs) }
func (j *job) unlaunched() bool { return j.next < len(j.spec.durs) }

// reservation is a probe waiting in a worker's queue for its slot.
type reservation struct {
	job    *job
	long   bool
	est    float64
	enq    uint64 // enqueue order
	acc    float64
	bypass int
	sticky bool
	round  int
}

// worker is a one-slot worker.
type worker struct {
	queue    []*reservation
	busy     bool // running a task or waiting for a getTask reply
	runLong  bool
	runStart float64
	runEst   float64
	longWork float64 // estimated long work queued or running (LWL)
}

// engine is one run.
type engine struct {
	cfg      Config
	pol      policy
	trace    traceShape
	rng      *rand.Rand
	ix       *classIndex
	workers  []worker
	bigFrom  int // size of the short-only partition
	longBusy bitset
	ev       heapq.Timeline[event]
	seq      uint64
	enq      uint64
	now      float64
	jobs     []*job
	pending  int // jobs not finished or rejected
	crv      *crvTracker

	violations    int
	guardBreaches int
	relaxedJobs   int
	stolen        int
	repartitions  int
}

func (s *engine) at(dt float64, e event) {
	e.at = s.now + dt
	s.seq++
	e.seq = s.seq
	s.ev.Push(e.at, e.seq, e)
}

// newEngine builds the cluster and the trace of cfg (resolved).
func newEngine(cfg Config) *engine {
	t := traceShapes[cfg.Trace]
	s := &engine{cfg: cfg, pol: policyFor(cfg), trace: t,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))}
	crng := rand.New(rand.NewPCG(cfg.Seed, 1))
	attrs := workerAttrs(cfg.Workers, crng)
	specs := generate(cfg, rand.New(rand.NewPCG(cfg.Seed, 2)))
	s.bigFrom = cfg.Workers - int(t.big*float64(cfg.Workers)+0.5)
	s.ix = newClassIndex(attrs, s.bigFrom)
	s.workers = make([]worker, cfg.Workers)
	s.longBusy = newBitset(cfg.Workers)
	if s.pol.crv {
		s.crv = newCRVTracker(s)
	}
	s.jobs = make([]*job, len(specs))
	for i := range specs {
		j := &job{id: i, spec: &specs[i]}
		for _, c := range specs[i].cons {
			if !c.Soft {
				j.hard = append(j.hard, c)
			}
		}
		s.jobs[i] = j
		s.at(specs[i].submit, event{kind: evArrive, job: j})
	}
	s.pending = len(s.jobs)
	return s
}

// run drains the event heap.
func (s *engine) run() {
	if s.crv != nil {
		s.at(crvPeriod, event{kind: evTick})
	}
	for s.ev.Len() > 0 {
		e := s.ev.Pop().Value
		s.now = e.at
		switch e.kind {
		case evArrive:
			s.arrive(e.job)
		case evProbe:
			s.probeArrives(int(e.worker), e.resv)
		case evRefused:
			s.refused(e.resv)
		case evGetTask:
			s.getTask(int(e.worker), e.resv)
		case evFree:
			s.workers[e.worker].busy = false
			s.slotFree(int(e.worker))
		case evTaskEnd:
			s.taskEnd(int(e.worker), e.job, e.resv)
		case evTick:
			s.crv.tick()

			if s.pol.partition && s.crv.version%s.repartitionTicks() == 0 {
				s.repartition()
			}
			if s.pending > 0 {
				s.at(crvPeriod, event{kind: evTick})
			}
		}
	}
}

// arrive admits a job and places it.
func (s *engine) arrive(j *job) {
	if !s.admit(j) {
		j.reject = true
		s.pending--
		return
	}
	j.remain = j.spec.est * float64(j.tasks())
	if s.crv != nil {
		s.crv.admitted(j)
	}
	if j.spec.long && s.pol.centralLong {
		s.placeLong(j)
		return
	}
	if s.pol.partition {
		s.noteShort(j)
	}
	s.placeShort(j)
}

// getTask is late binding (docs/phoenix.md): the job's scheduler hands the next
// unlaunched task to the worker whose reservation reached a free slot.
func (s *engine) getTask(w int, r *reservation) {
	j := r.job
	if !j.unlaunched() {
		if r.sticky {
			s.dropResv(w, r)
		}
		s.at(netDelay, event{kind: evFree, worker: int32(w)})
		return
	}
	k := j.next
	j.next++
	j.remain = j.spec.est * float64(j.tasks()-j.next)
	start := s.now + netDelay
	j.waitSum += start - j.spec.submit
	dur := j.spec.durs[k]
	attrs := s.ix.attrs[w]
	if !protocol.HoldHard(j.hard, attrs) && s.pol.constraints {
		s.violations++
	}
	if len(j.relaxed) > 0 && s.cfg.SoftPenalty != 1 && protocol.SoftMisses(j.relaxed, attrs) > 0 {
		dur *= s.cfg.SoftPenalty
	}
	wk := &s.workers[w]
	wk.runLong, wk.runStart, wk.runEst = r.long, start, j.spec.est
	s.at(netDelay+dur, event{kind: evTaskEnd, worker: int32(w), job: j, resv: r})
}

// taskEnd records a finished task and frees the slot.
func (s *engine) taskEnd(w int, j *job, r *reservation) {
	wk := &s.workers[w]
	if r.long && s.pol.centralLong {
		wk.longWork -= j.spec.est
		if wk.longWork < 1e-9 {
			wk.longWork = 0
			s.longBusy.clear(w)
		}
	}
	wk.runLong = false
	if s.crv != nil {
		s.crv.finished(j)
	}
	j.done++
	if j.done == j.tasks() {
		j.finish = s.now
		s.pending--
	}
	wk.busy = false
	s.slotFree(w)
}

// dropResv removes r from w's queue if it is there.
func (s *engine) dropResv(w int, r *reservation) {
	q := s.workers[w].queue
	for i, x := range q {
		if x == r {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			s.workers[w].queue = q[:len(q)-1]
			return
		}
	}
}

// enqueue appends r to w's queue and starts it if the slot is free.
func (s *engine) enqueue(w int, r *reservation) {
	s.enq++
	r.enq = s.enq
	wk := &s.workers[w]
	wk.queue = append(wk.queue, r)
	if !wk.busy {
		s.slotFree(w)
	}
}
