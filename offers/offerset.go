package offers

import (
	"slices"
	"strings"
)

// offerSet is the outstanding offers of one framework or of one agent, as
// a slice. Each offer remembers its position in both of its sets (pos,
// indexed by the set's side), so adding and removing take no hashing: a
// large round adds and removes an offer in each twice per agent.
type offerSet struct {
	list []*offer
	side int // fwSide or agentSide: which of an offer's positions is ours
}

const (
	fwSide = iota
	agentSide
)

func (s *offerSet) add(o *offer) {
	o.pos[s.side] = len(s.list)
	s.list = append(s.list, o)
}

// remove takes o out of the set, moving the last offer into its place.
func (s *offerSet) remove(o *offer) {
	i := o.pos[s.side]
	if i >= len(s.list) || s.list[i] != o {
		return
	}
	last := len(s.list) - 1
	s.list[i] = s.list[last]
	s.list[i].pos[s.side] = i
	s.list[last] = nil
	s.list = s.list[:last]
}

func (s *offerSet) len() int { return len(s.list) }

// sorted returns the set's offers ordered by ID.
func (s *offerSet) sorted() []*offer {
	out := slices.Clone(s.list)
	slices.SortFunc(out, func(x, y *offer) int { return strings.Compare(string(x.id), string(y.id)) })
	return out
}
