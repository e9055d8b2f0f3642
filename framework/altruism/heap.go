package altruism

// finishEvent is a group of count tasks of one stage finishing at time at
// (an offset from now, in nanoseconds) in a forward pack.
type finishEvent struct {
	at    int64
	stage int
	count int
}

// eventHeap is a binary min-heap of finish events ordered by time. It is
// hand-rolled rather than built on container/heap so that pushing does not
// box every event into an interface.
type eventHeap []finishEvent

func (h *eventHeap) push(e finishEvent) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if s[parent].at <= s[i].at {
			break
		}
		s[parent], s[i] = s[i], s[parent]
		i = parent
	}
}

func (h *eventHeap) pop() finishEvent {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].at < s[m].at {
			m = l
		}
		if r < len(s) && s[r].at < s[m].at {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return top
}
