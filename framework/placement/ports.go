package placement

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// PickPorts takes n ports from avail's port ranges, the lowest first. It
// returns protocol.ErrInsufficient when avail holds fewer than n.
func PickPorts(avail protocol.Resources, n int) (protocol.Ranges, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: %d ports", protocol.ErrInvalidArgument, n)
	}
	got, ok := avail.Ranges[protocol.ResPorts].Take(uint64(n))
	if !ok {
		return nil, fmt.Errorf("%w: %d ports wanted, %d offered", protocol.ErrInsufficient, n,
			avail.Ranges[protocol.ResPorts].Normalize().Count())
	}
	return got, nil
}

// WithPorts returns a copy of res that also holds ports as its port range,
// e.g. a task's resources with the ports picked for it.
func WithPorts(res protocol.Resources, ports protocol.Ranges) protocol.Resources {
	out := res.Clone()
	if len(ports) == 0 {
		return out
	}
	if out.Ranges == nil {
		out.Ranges = map[string]protocol.Ranges{}
	}
	out.Ranges[protocol.ResPorts] = out.Ranges[protocol.ResPorts].Union(ports)
	return out
}

// PortList lists the members of a port range set in ascending order.
func PortList(ports protocol.Ranges) []uint64 {
	var out []uint64
	for _, r := range ports.Normalize() {
		for p := r.Begin; ; p++ {
			out = append(out, p)
			if p == r.End {
				break
			}
		}
	}
	return out
}
