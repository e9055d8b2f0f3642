package testutil

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago. They are drawn below the kernel's ephemeral range when it
// leaves room: a test that binds a port later, or again after a restart,
// would otherwise race every outgoing connection (each NATS client's),
// which the kernel gives ports from that range.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	lo, hi := fixedPortRange()
	ports := make([]int, 0, n)
	for attempt := 0; len(ports) < n; attempt++ {
		addr := "127.0.0.1:0"
		if hi > lo && attempt < 1000 {
			addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo)))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if addr == "127.0.0.1:0" {
				t.Fatalf("free port: %v", err)
			}
			continue // taken, or drawn twice (the first is still open)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// fixedPortRange is where FreePorts draws ports: from 10000 to the start
// of the ephemeral range, or nothing when that is unknown or too low.
func fixedPortRange() (lo, hi int) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0, 0
	}
	first, err := strconv.Atoi(fields[0])
	if err != nil || first <= 11000 {
		return 0, 0
	}
	return 10000, first
}
