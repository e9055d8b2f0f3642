package sim

import "container/heap"

// Placement: batch probing of short jobs with SSS refusal rounds,
// centralised LWL for long jobs, and Hawk's stealing (docs/phoenix.md).

// sample draws a worker of list uniformly; avoid, when set, is tried to be
// avoided by rejection (a few draws, then any).
func (s *pxSim) sample(list []int32, avoid pxBits) int {
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
func (s *pxSim) sample2(list []int32, a, b pxBits) int {
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
func (s *pxSim) placeShort(j *pxJob) {
	n := max(pxProbeRatio*j.tasks(), s.pol.minProbes)
	long := j.spec.long // yaq-d places long jobs by probing too
	for i := range n {
		list := j.sig.all
		if j.pref != nil && i%2 == 0 {
			list = j.pref.all
		}
		var avoid pxBits
		if s.pol.sss {
			avoid = s.longBusy // the freshest long-busy bitmap (SSS)
		}
		var w int
		if s.pol.crvSampling && s.crv.scarce != nil && !s.crv.contended(j) {
			w = s.sample2(list, avoid, s.crv.scarce)
		} else {
			w = s.sample(list, avoid)
		}
		s.at(pxNetDelay, pxEvent{kind: evProbe, worker: int32(w),
			resv: &pxResv{job: j, long: long, est: j.spec.est, round: 1}})
	}
}

// probeArrives enqueues a reservation, or refuses it (SSS: long work here;
// Yaq-d: queue full) while it has refusal rounds left.
func (s *pxSim) probeArrives(w int, r *pxResv) {
	if !r.long && !r.job.unlaunched() {
		return
	}
	wk := &s.workers[w]
	refuse := false
	switch {
	case r.long && s.pol.centralLong:
	case s.pol.sss:
		refuse = r.round <= pxSSSRounds && wk.longWork > 0
	case s.pol.queueBound > 0:
		refuse = r.round <= pxYaqRounds && len(wk.queue) >= s.pol.queueBound
	}
	if refuse {
		s.at(pxNetDelay, pxEvent{kind: evRefused, resv: r})
		return
	}
	s.enqueue(w, r)
}

// refused re-sends a refused reservation: to a feasible worker not known to
// hold long work while rounds are left, then to the short-only partition.
func (s *pxSim) refused(r *pxResv) {
	j := r.job
	if !r.long && !j.unlaunched() {
		return
	}
	r.round++
	var w int
	switch {
	case s.pol.sss && r.round > pxSSSRounds:
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
	s.at(pxNetDelay, pxEvent{kind: evProbe, worker: int32(w), resv: r})
}

// lwlItem is a worker's estimated wait for LWL water-filling.
type lwlItem struct {
	wait float64
	w    int32
}

type lwlHeap []lwlItem

func (h lwlHeap) Len() int { return len(h) }
func (h lwlHeap) Less(i, j int) bool {
	if h[i].wait != h[j].wait {
		return h[i].wait < h[j].wait
	}
	return h[i].w < h[j].w
}
func (h lwlHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lwlHeap) Push(x any)   { *h = append(*h, x.(lwlItem)) }
func (h *lwlHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// placeLong water-fills the job's tasks onto the feasible workers of the big
// partition with the least estimated long work (docs/phoenix.md).
func (s *pxSim) placeLong(j *pxJob) {
	list := j.sig.big
	if len(list) == 0 {
		list = j.sig.all
	}
	h := make(lwlHeap, len(list))
	for i, w := range list {
		wk := &s.workers[w]
		wait := wk.longWork
		if wk.runLong {
			wait -= min(s.now-wk.runStart, wk.runEst)
			wait += 2 * pxNetDelay
		}
		h[i] = lwlItem{wait: wait, w: w}
	}
	heap.Init(&h)
	for range j.tasks() {
		w := int(h[0].w)
		h[0].wait += j.spec.est
		heap.Fix(&h, 0)
		s.workers[w].longWork += j.spec.est
		s.longBusy.set(w)
		s.at(pxNetDelay, pxEvent{kind: evProbe, worker: int32(w),
			resv: &pxResv{job: j, long: true, est: j.spec.est, round: 1}})
	}
}

// trySteal lets idle worker w take short reservations queued behind long
// ones at random workers of the big partition (Hawk, docs/phoenix.md); it reports
// whether it took any.
func (s *pxSim) trySteal(w int) bool {
	nBig := len(s.workers) - s.bigFrom
	if nBig == 0 {
		return false
	}
	for range pxStealAttempts {
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
		s.at(2*pxNetDelay, pxEvent{kind: evFree, worker: int32(w)})
		return true
	}
	return false
}

// giveShortBehindLong removes from v's queue the first run of short
// reservations behind long ones that thief can run.
func (s *pxSim) giveShortBehindLong(v, thief int) []*pxResv {
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
	var got []*pxResv
	keep := q[:i]
	for ; i < len(q) && !q[i].long && len(got) < pxStealLimit; i++ {
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
