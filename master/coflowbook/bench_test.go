package coflowbook

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// BenchmarkCoflowReport measures the leader's work for one agent report
// and the schedule it sends, with active shuffles of 20 map agents by 10
// reducer agents (200 flows each) over 900 agents. "progress": the report
// finishes no flow (the common case: the lists stand). "finish": it
// finishes a flow, so the agents' lists are rebuilt; a coflow whose flows
// have all finished is registered again, to keep the count.
func BenchmarkCoflowReport(b *testing.B) {
	agent := func(i int) protocol.AgentID { return protocol.AgentID(fmt.Sprintf("ag-%d", i%900)) }
	flowOf := func(c, f int) (protocol.AgentID, protocol.AgentID) {
		return agent(c*7 + f/10), agent(c*13 + 500 + f%10)
	}
	register := func(b *testing.B, book *Book, now time.Time, c int) {
		flows := make([]protocol.FlowSpec, 200)
		for f := range flows {
			src, dst := flowOf(c, f)
			flows[f] = protocol.FlowSpec{Src: src, Dst: dst, Transfers: 1 << 30}
		}
		if err := book.Register(now, &protocol.CoflowRegisterRequest{FrameworkID: "fw", CoflowID: fmt.Sprint("c", c), Flows: flows}); err != nil {
			b.Fatal(err)
		}
	}
	for _, finish := range []bool{false, true} {
		for _, active := range []int{100, 500} {
			kind := map[bool]string{false: "progress", true: "finish"}[finish]
			b.Run(fmt.Sprintf("%s/active=%d", kind, active), func(b *testing.B) {
				book, err := New("philae", 1)
				if err != nil {
					b.Fatal(err)
				}
				now := time.Unix(1_700_000_000, 0)
				for c := range active {
					register(b, book, now, c)
				}
				book.Schedule(now)
				i := 0
				for b.Loop() {
					c, f := i%active, (i/active)%200
					i++
					src, dst := flowOf(c, f)
					now = now.Add(time.Millisecond)
					book.Report(now, &protocol.CoflowReportRequest{AgentID: src, Flows: []protocol.FlowProgress{{
						FrameworkID: "fw", CoflowID: fmt.Sprint("c", c), Src: src, Dst: dst,
						BytesSent: int64(i) << 10, Transfers: i, Done: finish}}})
					if finish && f == 199 {
						register(b, book, now, c)
					}
					book.Schedule(now)
				}
			})
		}
	}
}
