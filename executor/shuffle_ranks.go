package executor

import (
	"github.com/allot-project/allot/executor/files"
	"github.com/allot-project/allot/protocol"
)

// rankTable is one list of the leader's coflow priorities as ranks, by
// transfer: exact ranks a flow, keyed (framework, coflow, the agent at its
// other end); coflow ranks the coflow's flows not listed on their own,
// keyed (framework, coflow, ""). The egress list's other end is the
// receiver (files.Transfer.Dst); the ingress list's is the sender, which
// the ingress keys in the same field.
type rankTable struct {
	exact, coflow map[files.Transfer]int
}

// newRankTable builds the table of a list whose entries are already
// validated; other picks an entry's other end. A key listed twice keeps
// its best rank.
func newRankTable(prios []protocol.CoflowPriority, other func(protocol.CoflowPriority) protocol.AgentID) rankTable {
	r := rankTable{exact: map[files.Transfer]int{}, coflow: map[files.Transfer]int{}}
	for _, p := range prios {
		end := other(p)
		k := files.Transfer{Framework: string(p.FrameworkID), Coflow: p.CoflowID, Dst: string(end)}
		m := r.exact
		if end == "" {
			m = r.coflow
		}
		if cur, ok := m[k]; !ok || p.Rank < cur {
			m[k] = p.Rank
		}
	}
	return r
}

// rank returns t's rank, and false for an unranked transfer.
func (r rankTable) rank(t files.Transfer) (int, bool) {
	if n, ok := r.exact[t]; ok {
		return n, true
	}
	n, ok := r.coflow[files.Transfer{Framework: t.Framework, Coflow: t.Coflow}]
	return n, ok
}

func egressEnd(p protocol.CoflowPriority) protocol.AgentID  { return p.Dst }
func ingressEnd(p protocol.CoflowPriority) protocol.AgentID { return p.Src }
