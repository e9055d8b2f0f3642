package offers

// The planner's setup looks up, for each of a hundred thousand running
// tasks, its framework, its agent and its resources' vector: most of a
// plan's setup. Between two plans few tasks start or end, and a leader
// lists them in the same order each time, so the planner keeps the last
// plan's tasks (planTask holds what was looked up) and the next plan
// walks its list beside them, looking up only what it does not find
// there. A task is taken to keep its resources while its framework, ID,
// agent and start time stay the same.

// memoWindow is how far ahead of its place in the last plan's list the
// walk looks for a task before giving up on it: tasks that ended since
// are skipped that way.
const memoWindow = 256

// memoLost is how many tasks in a row the walk finds nowhere near its
// place before it takes itself for lost (more tasks ended together than
// memoWindow) and indexes the last list by key; a task that started since
// the last plan is such a miss, on its own.
const memoLost = 8

// memoKey finds a task of the last plan once the walk has lost its place.
type memoKey struct {
	fw   string
	task string
}

// memoWalk reads the last plan's tasks in list order; missed counts the
// tasks in a row it did not find.
type memoWalk struct {
	last   []planTask
	width  int
	next   int
	missed int
	byKey  map[memoKey]int32
}

// find is the last plan's entry of t, or nil.
func (w *memoWalk) find(t *RunningTask, startNs int64) *planTask {
	end := min(len(w.last), w.next+memoWindow)
	for k := w.next; k < end; k++ {
		if m := &w.last[k]; m.is(t, startNs) {
			w.next, w.missed = k+1, 0
			return m
		}
	}
	if len(w.last) == 0 {
		return nil
	}
	if w.byKey == nil {
		if w.missed++; w.missed < memoLost {
			return nil
		}
		w.byKey = make(map[memoKey]int32, len(w.last))
		for k := range w.last {
			w.byKey[memoKey{string(w.last[k].FrameworkID), string(w.last[k].TaskID)}] = int32(k)
		}
	}
	k, ok := w.byKey[memoKey{string(t.FrameworkID), string(t.TaskID)}]
	if !ok || !w.last[k].is(t, startNs) {
		return nil
	}
	w.next, w.missed = int(k)+1, 0
	return &w.last[k]
}

func (m *planTask) is(t *RunningTask, startNs int64) bool {
	return m.startNs == startNs && m.TaskID == t.TaskID && m.FrameworkID == t.FrameworkID && m.AgentID == t.AgentID
}

// reusable is m's framework, agent and resources when they are still the
// allocator's: a framework or agent removed (and perhaps added again
// under its ID), or a registry grown since, is looked up afresh.
func (a *Allocator) reusable(m *planTask, width int) bool {
	return m != nil && len(m.res) == width &&
		int(m.fi) < len(a.fwByIdx) && a.fwByIdx[m.fi] == m.f &&
		int(m.ai) < len(a.agentList) && a.agentList[m.ai] == m.ag
}

// planTasks are the last plan's tasks and the arrays of the next, swapped
// after each plan: the tasks' list and the array their vectors lie in.
type planTasks struct {
	last, next       []planTask
	lastWidth        int
	lastRes, nextRes []int64
}

// begin starts the next plan's tasks, n at most of width scalars each: a
// walk over the last plan's and the arrays to fill.
func (pt *planTasks) begin(n, width int) (memoWalk, []planTask, []int64) {
	w := memoWalk{width: width}
	if pt.lastWidth == width {
		w.last = pt.last
	}
	if cap(pt.next) < n {
		pt.next = make([]planTask, 0, n)
	}
	return w, pt.next[:0], reuse(&pt.nextRes, n*width)
}

// end keeps tasks, the plan's list in the next array, as the last plan's.
// The older list keeps its frameworks and agents reachable until the
// plan after next overwrites it.
func (pt *planTasks) end(tasks []planTask, width int) {
	pt.last, pt.next = tasks, pt.last[:0]
	pt.lastRes, pt.nextRes = pt.nextRes, pt.lastRes
	pt.lastWidth = width
}
