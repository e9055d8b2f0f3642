package dag

import (
	"math"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// divideShare splits the framework's share among its jobs by DRF with
// demand caps, computed by water filling (docs/carbyne.md, "A run"): every
// job's cap, and the direction it grows in, is the summed demand of its
// unfinished tasks, caps[k]; the jobs' dominant shares of total rise
// together until a job is fully served or a resource it uses runs out.
// What no job could claim of a resource is then spread evenly over the
// jobs that use it, so the shares add up to total. Resources total lacks
// are nobody's. The result has one entry per cap, in order.
func divideShare(total protocol.Resources, caps []protocol.Resources) []protocol.Resources {
	out := make([]protocol.Resources, len(caps))
	var dims []string
	for name, v := range total.Scalars {
		if v > 0 {
			dims = append(dims, name)
		}
	}
	slices.Sort(dims)
	if len(dims) == 0 || len(caps) == 0 {
		return out
	}
	if len(caps) == 1 {
		out[0] = protocol.Scalars(total.Scalars)
		return out
	}
	unit, limit := shareDirections(total, caps, dims)
	x := waterFill(unit, limit, len(dims))
	spreadShares(out, total, caps, dims, unit, x)
	return out
}

// shareDirections is, for each cap, the direction its job grows in (unit,
// over dims, its dominant component 1) and its dominant share of total
// when fully served (limit).
func shareDirections(total protocol.Resources, caps []protocol.Resources, dims []string) (unit [][]float64, limit []float64) {
	n, m := len(caps), len(dims)
	unit = make([][]float64, n)
	limit = make([]float64, n)
	for k, c := range caps {
		unit[k] = make([]float64, m)
		for r, name := range dims {
			unit[k][r] = float64(c.Scalar(name)) / float64(total.Scalars[name])
			limit[k] = max(limit[k], unit[k][r])
		}
		if limit[k] > 0 {
			for r := range unit[k] {
				unit[k][r] /= limit[k]
			}
		}
	}
	return unit, limit
}

// waterFill raises the jobs' dominant shares together along unit, over m
// resources, until each job reaches its limit or a resource it uses runs
// out; it returns each job's dominant share.
func waterFill(unit [][]float64, limit []float64, m int) []float64 {
	const eps = 1e-12
	n := len(unit)
	x := make([]float64, n)
	used := make([]float64, m)
	active := make([]bool, n)
	left := 0
	for k := range n {
		if limit[k] > 0 {
			active[k] = true
			left++
		}
	}
	// Every round ends at least one job: fully served, or stopped by a
	// resource running out.
	for left > 0 {
		step := math.Inf(1)
		for r := range m {
			var rate float64
			for k := range n {
				if active[k] {
					rate += unit[k][r]
				}
			}
			if rate > 0 {
				step = min(step, (1-used[r])/rate)
			}
		}
		for k := range n {
			if active[k] {
				step = min(step, limit[k]-x[k])
			}
		}
		step = max(step, 0)
		for k := range n {
			if active[k] {
				x[k] += step
				for r := range m {
					used[r] += step * unit[k][r]
				}
			}
		}
		ended := 0
		for k := range n {
			if !active[k] {
				continue
			}
			stop := x[k] >= limit[k]-eps
			for r := range m {
				stop = stop || (unit[k][r] > 0 && used[r] >= 1-eps)
			}
			if stop {
				active[k] = false
				ended++
			}
		}
		if ended == 0 {
			break // numerically stuck: nothing more to hand out
		}
		left -= ended
	}
	return x
}

// spreadShares sets out to the jobs' shares of total: each job's dominant
// share x[k] along unit[k], rounded down, then what no job claimed of a
// resource spread evenly over the jobs whose caps use it. Zero entries are
// left out.
func spreadShares(out []protocol.Resources, total protocol.Resources, caps []protocol.Resources, dims []string,
	unit [][]float64, x []float64) {
	for k := range caps {
		out[k].Scalars = map[string]int64{}
	}
	for r, name := range dims {
		tot := total.Scalars[name]
		var given int64
		var users []int
		for k := range caps {
			v := int64(math.Floor(x[k] * unit[k][r] * float64(tot)))
			v = min(max(v, 0), tot-given)
			out[k].Scalars[name] = v
			given += v
			if caps[k].Scalar(name) > 0 {
				users = append(users, k)
			}
		}
		if rest := tot - given; rest > 0 && len(users) > 0 {
			each, extra := rest/int64(len(users)), rest%int64(len(users))
			for i, k := range users {
				out[k].Scalars[name] += each
				if int64(i) < extra {
					out[k].Scalars[name]++
				}
			}
		}
	}
	for k := range out {
		for name, v := range out[k].Scalars {
			if v == 0 {
				delete(out[k].Scalars, name)
			}
		}
	}
}
