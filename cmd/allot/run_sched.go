package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/framework/placement"
	"github.com/allot-project/allot/protocol"
)

// runScheduler launches `allot run`'s instances on the first offers they
// fit and follows their states.
type runScheduler struct {
	framework.NopScheduler
	mu       sync.Mutex
	tasks    []protocol.TaskInfo
	launched map[protocol.TaskID]protocol.Offer // the offer each was launched on
	latest   map[protocol.TaskID]protocol.TaskStatus
	changed  chan struct{}
}

func newRunScheduler(tasks []protocol.TaskInfo) *runScheduler {
	return &runScheduler{tasks: tasks, launched: map[protocol.TaskID]protocol.Offer{},
		latest: map[protocol.TaskID]protocol.TaskStatus{}, changed: make(chan struct{}, 1)}
}

func (s *runScheduler) Offers(d *framework.Driver, offers []protocol.Offer) {
	ctx := context.Background()
	for _, o := range offers {
		s.mu.Lock()
		var batch []protocol.TaskInfo
		left := o.Resources
		for _, t := range s.tasks {
			if _, ok := s.launched[t.TaskID]; ok || placement.HowMany(left, placement.ShapeOf(t, 1)) == 0 {
				continue
			}
			t.AgentID = o.AgentID
			batch = append(batch, t)
			left = left.Sub(t.Resources)
			s.launched[t.TaskID] = o
		}
		s.mu.Unlock()
		if len(batch) == 0 {
			_ = d.Decline(ctx, []protocol.OfferID{o.ID}, 0)
			continue
		}
		if err := d.Launch(ctx, []protocol.OfferID{o.ID}, batch...); err != nil {
			s.mu.Lock()
			for _, t := range batch {
				delete(s.launched, t.TaskID)
			}
			s.mu.Unlock()
		}
	}
}

func (s *runScheduler) StatusUpdate(_ *framework.Driver, st protocol.TaskStatus) {
	s.mu.Lock()
	if prev, ok := s.latest[st.TaskID]; !ok || !prev.State.Terminal() {
		s.latest[st.TaskID] = st
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// state says, for task i, the offer it runs on (ok false before its
// launch) and its latest status.
func (s *runScheduler) state(i int) (protocol.Offer, bool, protocol.TaskStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.tasks[i].TaskID
	o, ok := s.launched[id]
	return o, ok, s.latest[id]
}

// wait follows the instances until all ended, printing their output, and
// returns the first non-zero exit code by index as exitCode. When ctx ends
// first it kills the instances and waits up to their grace for them.
func (s *runScheduler) wait(ctx context.Context, d *framework.Driver, out *runOutput, grace time.Duration, stderr io.Writer) error {
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	stopping := false
	var killDeadline <-chan time.Time
	for {
		done := 0
		for i := range s.tasks {
			o, launched, st := s.state(i)
			if launched {
				out.poll(i, o, st.State.Terminal())
			}
			if st.State.Terminal() {
				done++
			}
		}
		if done == len(s.tasks) {
			return s.result(stderr)
		}
		if !stopping && ctx.Err() != nil {
			stopping = true
			fmt.Fprintf(stderr, "allot run: stopping: killing the instances (%v)\n", context.Cause(ctx))
			for i := range s.tasks {
				if o, launched, st := s.state(i); launched && !st.State.Terminal() {
					_ = d.Kill(context.Background(), s.tasks[i].TaskID, o.AgentID, grace)
				}
			}
			killDeadline = time.After(grace + 10*time.Second)
		}
		if stopping && !s.anyLaunchedRunning() {
			return exitCode(130)
		}
		select {
		case <-s.changed:
		case <-tick.C:
		case <-ctx.Done():
		case <-killDeadline:
			fmt.Fprintln(stderr, "allot run: the instances did not end in time; removing the framework kills them")
			return exitCode(130)
		}
	}
}

// anyLaunchedRunning reports whether a launched instance has not ended.
func (s *runScheduler) anyLaunchedRunning() bool {
	for i := range s.tasks {
		if _, launched, st := s.state(i); launched && !st.State.Terminal() {
			return true
		}
	}
	return false
}

// result is the instances' outcome: nil when all finished with 0, else
// the first non-zero exit code by index (1 for an instance that ended
// without one), each failure told on stderr.
func (s *runScheduler) result(stderr io.Writer) error {
	code := 0
	for i := range s.tasks {
		_, _, st := s.state(i)
		c := 0
		switch {
		case st.ExitCode != nil:
			c = *st.ExitCode
		case st.State != protocol.TaskFinished:
			c = 1
		}
		if c != 0 {
			if len(s.tasks) > 1 || st.ExitCode == nil {
				fmt.Fprintf(stderr, "allot run: instance %d %s (%s) %s\n", i, st.State, st.Reason, st.Message)
			}
			if code == 0 {
				code = c
			}
		}
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}
