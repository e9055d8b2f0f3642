package offers

import (
	"fmt"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// GPU devices (protocol/devices.go). An agent's devices are scalars of
// their own, "gpu.<index>", besides its total "gpus" (milli-GPUs). Shares
// and guarantees see only "gpus": the device scalars are left out of the
// cluster's capacity, so they never weigh in a dominant share. A declared
// shape asks for "gpus" alone, a share of one device or whole devices;
// on an agent with devices it fits only where some device can serve it,
// and each unit offered there names the devices it holds room on (the
// least free device that serves a share, the first free ones for whole
// devices). A launched task names its devices, so a new leader's usage
// and a restarted agent's tasks keep them.

// gpuNeed is what a shape asks of devices: whole devices, or a share of
// one in milli (neither: none). spans marks gpus no device set can serve
// (more than one device but not whole ones): it fits no agent with
// devices, though agents without them count gpus as a plain scalar.
type gpuNeed struct {
	whole, share int64
	spans        bool
}

func (n gpuNeed) none() bool { return n.whole == 0 && n.share == 0 && !n.spans }

// gpuNeedOf reads a shape's need from its gpus.
func (a *Allocator) gpuNeedOf(res vec) gpuNeed {
	j, ok := a.reg.index[protocol.ResGPUs]
	if !ok {
		return gpuNeed{}
	}
	g := res.at(j)
	switch {
	case g == 0:
		return gpuNeed{}
	case g < protocol.DeviceMilli:
		return gpuNeed{share: g}
	case g%protocol.DeviceMilli == 0:
		return gpuNeed{whole: g / protocol.DeviceMilli}
	}
	return gpuNeed{spans: true}
}

// isDevice reports whether dimension j is a device's.
func (r *registry) isDevice(j int) bool { return j < len(r.device) && r.device[j] }

// agentDevices lists the dimensions of ag's devices, by device index.
func (a *Allocator) agentDevices(ag *agent) []int {
	var dims []int
	for name := range ag.info.Total.Scalars {
		if _, ok := protocol.GPUIndex(name); ok && ag.info.Total.Scalars[name] > 0 {
			dims = append(dims, a.reg.id(name))
		}
	}
	slices.SortFunc(dims, func(x, y int) int {
		kx, _ := protocol.GPUIndex(a.reg.names[x])
		ky, _ := protocol.GPUIndex(a.reg.names[y])
		return kx - ky
	})
	return dims
}

// withoutDevices is v with the device dimensions cleared (a copy when it
// has any).
func (a *Allocator) withoutDevices(v vec) vec {
	if len(a.reg.device) == 0 {
		return v
	}
	var out vec
	for j, x := range v {
		if x != 0 && a.reg.isDevice(j) {
			if out == nil {
				out = v.clone()
			}
			out[j] = 0
		}
	}
	if out == nil {
		return v
	}
	return out
}

// devicesFit reports whether some of free's devices among dims can serve
// need. An agent without devices answers by its gpus alone.
func devicesFit(free vec, dims []int, need gpuNeed) bool {
	if need.none() || len(dims) == 0 {
		return true
	}
	if need.spans {
		return false
	}
	whole := int64(0)
	for _, j := range dims {
		x := free.at(j)
		if need.share > 0 && x >= need.share {
			return true
		}
		if x >= protocol.DeviceMilli {
			whole++
		}
	}
	return need.whole > 0 && whole >= need.whole
}

// pickDevices is the device room one task of need takes from free among
// dims, as a vector over the device dimensions; nil when none serves.
func pickDevices(free vec, dims []int, need gpuNeed) vec {
	var out vec
	if !chooseDevices(free, dims, need, func(j int, x int64) {
		out = out.grow(j + 1)
		out[j] = x
	}) {
		return nil
	}
	return out
}

// chooseDevices calls take for each device pickDevices would pick, with
// the room it would take there, and reports whether the need is served
// (nothing taken otherwise).
func chooseDevices(free vec, dims []int, need gpuNeed, take func(j int, x int64)) bool {
	if need.none() || need.spans || len(dims) == 0 {
		return false
	}
	if need.share > 0 {
		best := -1
		for _, j := range dims {
			if x := free.at(j); x >= need.share && (best < 0 || x < free.at(best)) {
				best = j
			}
		}
		if best < 0 {
			return false
		}
		take(best, need.share)
		return true
	}
	whole := int64(0)
	for _, j := range dims {
		if free.at(j) >= protocol.DeviceMilli {
			whole++
		}
	}
	if whole < need.whole {
		return false
	}
	left := need.whole
	for _, j := range dims {
		if left > 0 && free.at(j) >= protocol.DeviceMilli {
			take(j, protocol.DeviceMilli)
			left--
		}
	}
	return true
}

// namesDevices reports whether v holds room on some device.
func (a *Allocator) namesDevices(v vec) bool {
	for j, x := range v {
		if x != 0 && a.reg.isDevice(j) {
			return true
		}
	}
	return false
}

// placeDevices names the devices of the tasks that ask for gpus on ag
// without naming any, from the device room the offers hold beyond what
// the other tasks name, and reports which tasks it named them for; it
// fails when they cannot all be served.
func (a *Allocator) placeDevices(ag *agent, offered vec, vecs []vec) ([]bool, error) {
	if len(ag.gpuDims) == 0 {
		return nil, nil
	}
	left := offered.clone()
	var open []int
	var named []bool
	for i, v := range vecs {
		if a.namesDevices(v) {
			left = left.sub(v)
			continue
		}
		open = append(open, i)
	}
	for _, i := range open {
		need := a.gpuNeedOf(vecs[i])
		if need.none() {
			continue
		}
		dv := pickDevices(left, ag.gpuDims, need)
		if dv == nil {
			return nil, fmt.Errorf("%w: task %d: no device in the offers serves %s", ErrInsufficient, i, a.reg.toResources(vecs[i]))
		}
		left = left.sub(dv)
		vecs[i] = vecs[i].clone().add(dv)
		if named == nil {
			named = make([]bool, len(vecs))
		}
		named[i] = true
	}
	return named, nil
}
