package phoenix

import "github.com/allot-project/allot/internal/heapq"

// Placement: batch probing of short jobs with SSS refusal rounds,
// centralised LWL for long jobs, and Hawk's stealing (docs/phoenix.md).

// sample draws a worker of list uniformly; avoid, when set, is tried to be
// avoided by rejection (a few draws, then any).
func (s *engine) sample(list []int32, avoid bitset) int {
	w := int(list[s.rng.IntN(len(list))])
	if avoid == nil {
		return w
	}
	for range 16 {
		if !avoid.has(w) {
			return w
		}
		w = int(list[s.rng.IntN(len(list))])
	}
	return w
}

// sample2 is sample avoiding both sets, then the first, then neither.
func (s *engine) sample2(list []int32, a, b bitset) int {
	for range 16 {
		w := int(list[s.rng.IntN(len(list))])
		if (a == nil || !a.has(w)) && !b.has(w) {
			return w
		}
	}
	return s.sample(list, a)
}

// placeShort sends d·m reservations (at least MIN_PROBES) to feasible
// workers; with PREFER_RELAXED half of them go to workers that also satisfy
// the relaxed soft constraints.
func (s *engine) placeShort(j *job) {
	n := max(probeRatio*j.tasks(), s.pol.minProbes)
	long := j.spec.long // yaq-d places long jobs by probing too
	for i := range n {
		list := j.sig.all
		if j.pref != nil && i%2 == 0 {
			list = j.pref.all
		}
		var avoid bitset
		if s.pol.sss {
			avoid = s.longBusy // the freshest long-busy bitmap (SSS)
		}
		var w int
		if s.pol.crvSampling && s.crv.scarce != nil && !s.crv.contended(j) {
			w = s.sample2(list, avoid, s.crv.scarce)
		} else {
			w = s.sample(list, avoid)
		}
		s.at(netDelay, event{kind: evProbe, worker: int32(w),
			resv: &reservation{job: j, long: long, est: j.spec.est, round: 1}})
	}
}

// probeArrives enqueues a reservation, or refuses it (SSS: long work here;
// Yaq-d: queue full) while it has refusal rounds left.
func (s *engine) probeArrives(w int, r *reservation) {
	if !r.long && !r.job.unlaunched() {
		return
	}
	wk := &s.workers[w]
	refuse := false
	switch {
	case r.long && s.pol.centralLong:
	case s.pol.sss:
		refuse = r.round <= sssRounds && wk.longWork > 0
	case s.pol.queueBound > 0:
		refuse = r.round <= yaqRounds && len(wk.queue) >= s.pol.queueBound
	}
	if refuse {
		s.at(netDelay, event{kind: evRefused, resv: r})
		return
	}
	s.enqueue(w, r)
}

// refused re-sends a refused reservation: to a feasible worker not known to
// hold long work while rounds are left, then to the short-only partition.
func (s *engine) refused(r *reservation) {
	j := r.job
	if !r.long && !j.unlaunched() {
		return
	}
	r.round++
	var w int
	switch {
	case s.pol.sss && r.round > sssRounds:
		list := j.sig.short
		if len(list) == 0 {
			list = j.sig.all
		}
		w = s.sample(list, nil)
	case s.pol.sss:
		w = s.sample(j.sig.all, s.longBusy)
	default:
		w = s.sample(j.sig.all, nil)
	}
	s.at(netDelay, event{kind: evProbe, worker: int32(w), resv: r})
}

// lwlItem is a worker's estimated wait for LWL water-filling.
type lwlItem struct {
	wait float64
	w    int32
}

// leastWaitFirst orders workers by estimated wait, equal waits by id.
func leastWaitFirst(a, b lwlItem) bool {
	if a.wait != b.wait {
		return a.wait < b.wait
	}
	return a.w < b.w
}

// placeLong water-fills the job's tasks onto the feasible workers of the big
// partition with the least estimated long work (docs/phoenix.md).
func (s *engine) placeLong(j *job) {
	list := j.sig.big
	if len(list) == 0 {
		list = j.sig.all
	}
	h := heapq.New(leastWaitFirst)
	for _, w := range list {
		wk := &s.workers[w]
		wait := wk.longWork
		if wk.runLong {
			wait -= min(s.now-wk.runStart, wk.runEst)
			wait += 2 * netDelay
		}
		h.Push(lwlItem{wait: wait, w: w})
	}
	for range j.tasks() {
		least := h.Pop()
		w := int(least.w)
		least.wait += j.spec.est
		h.Push(least)
		s.workers[w].longWork += j.spec.est
		s.longBusy.set(w)
		s.at(netDelay, event{kind: evProbe, worker: int32(w),
			resv: &reservation{job: j, long: true, est: j.spec.est, round: 1}})
	}
}

// trySteal lets idle worker w take short reservations queued behind long
// ones at random workers of the big partition (Hawk, docs/phoenix.md); it reports
// whether it took any.
func (s *engine) trySteal(w int) bool {
	nBig := len(s.workers) - s.bigFrom
	if nBig == 0 {
		return false
	}
	for range stealAttempts {
		v := s.bigFrom + s.rng.IntN(nBig)
		if v == w {
			continue
		}
		got := s.giveShortBehindLong(v, w)
		if len(got) == 0 {
			continue
		}
		s.stolen += len(got)
		wk := &s.workers[w]
		for _, r := range got {
			s.enq++
			r.enq = s.enq
			wk.queue = append(wk.queue, r)
		}
		// The stolen reservations travel one round trip.
		wk.busy = true
		s.at(2*netDelay, event{kind: evFree, worker: int32(w)})
		return true
	}
	return false
}

// giveShortBehindLong removes from v's queue the first run of short
// reservations behind long ones that thief can run.
func (s *engine) giveShortBehindLong(v, thief int) []*reservation {
	q := s.workers[v].queue
	i := 0
	if !s.workers[v].runLong {
		for i < len(q) && !q[i].long {
			i++
		}
	}
	for i < len(q) && q[i].long {
		i++
	}
	var got []*reservation
	keep := q[:i]
	for ; i < len(q) && !q[i].long && len(got) < stealLimit; i++ {
		if q[i].job.unlaunched() && q[i].job.sig.bits.has(thief) {
			got = append(got, q[i])
		} else if q[i].job.unlaunched() {
			keep = append(keep, q[i])
		}
	}
	keep = append(keep, q[i:]...)
	for k := len(keep); k < len(q); k++ {
		q[k] = nil
	}
	s.workers[v].queue = keep
	return got
}
