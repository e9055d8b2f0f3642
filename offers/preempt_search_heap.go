package offers

// The heap of the agents' picks a victim search keeps (victimSearch.heap).

// before orders search entries as better orders picks, then the earlier
// agent first.
func (e searchEntry) before(o searchEntry) bool {
	switch {
	case e.tier != o.tier:
		return e.tier > o.tier
	case e.count != o.count:
		return e.count < o.count
	case e.sure != o.sure:
		return e.sure < o.sure
	case e.spare != o.spare:
		return e.spare > o.spare
	case e.newest != o.newest:
		return e.newest > o.newest
	}
	return e.ag < o.ag
}

func heapPush(h *[]searchEntry, e searchEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[i].before(s[up]) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

// heapInit makes h a heap.
func heapInit(h []searchEntry) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

func siftDown(s []searchEntry, i int) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].before(s[m]) {
			m = l
		}
		if r < len(s) && s[r].before(s[m]) {
			m = r
		}
		if m == i {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

func heapPop(h *[]searchEntry) {
	s := *h
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	siftDown(s, 0)
	*h = s
}
