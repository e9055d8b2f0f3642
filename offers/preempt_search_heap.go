package offers

// The heap of the agents' picks a victim search keeps (victimSearch.heap).

// before orders search entries as better orders picks, then the earlier
// agent first: the order of the search's heap (internal/heapq).
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
