package natsclient

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
)

// idleAgents is how many connections BenchmarkIdleAgents holds: as many
// as one process's file descriptors allow for both ends.
const idleAgents = 4000

// BenchmarkIdleAgents measures what idle agents' connections cost, server
// and clients together in this process: each op is one second of nothing
// but their pings, every PingInterval (frameworks' and masters') or every
// AgentPingInterval (agents'). cpu-µs/agent-second is the CPU one agent's
// connection costs a second; times 10,000 agents it is the cores a
// 10,000-agent cluster spends on pings.
func BenchmarkIdleAgents(b *testing.B) {
	for _, every := range []time.Duration{PingInterval, AgentPingInterval} {
		b.Run(fmt.Sprintf("ping=%v", every), func(b *testing.B) {
			srv := startServer(b)
			for i := range idleAgents {
				nc, err := nats.Connect(srv.ClientURL(), append(Options(), nats.PingInterval(every))...)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(nc.Close)
				if _, err := nc.Subscribe(fmt.Sprintf("allot.agent.cmd.%d", i), func(*nats.Msg) {}); err != nil {
					b.Fatal(err)
				}
			}
			clock := testutil.StartBenchClock()
			b.ResetTimer()
			clock.Start()
			for range b.N {
				time.Sleep(time.Second) // the connections idle: what is measured is their pings
			}
			clock.Stop()
			b.StopTimer()
			clock.Report(b, b.N*idleAgents, "agent-second")
		})
	}
}
