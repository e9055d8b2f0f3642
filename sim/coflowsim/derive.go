package coflowsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// The derived and synthetic traces of docs/coflow.md. All are deterministic
// functions of their input and seed.

// FilterSkew keeps the coflows whose largest flow is more than k times their
// smallest (the low-skew-filtered traces of docs/coflow.md: k = 1..5 keep 142,
// 100, 64, 50 and 43 of FB2010's 526 coflows).
func FilterSkew(tr *Trace, k float64) *Trace {
	out := &Trace{Ports: tr.Ports}
	for _, c := range tr.Coflows {
		if c.Skew() > k {
			out.Coflows = append(out.Coflows, c)
		}
	}
	return out
}

// WideOnly keeps the coflows of more than thin flows (docs/coflow.md: 269 of
// FB2010's coflows have more than 7).
func WideOnly(tr *Trace, thin int) *Trace {
	out := &Trace{Ports: tr.Ports}
	for _, c := range tr.Coflows {
		if len(c.Flows) > thin {
			out.Coflows = append(out.Coflows, c)
		}
	}
	return out
}

// Replicate copies every coflow n times with the same arrival; copy i has
// its ports shifted by i·Ports and the id "<id>.<i>" (copy 0 keeps its id).
// FB2010 ×6 is the paper's 900-port trace (docs/coflow.md).
func Replicate(tr *Trace, n int) *Trace {
	out := &Trace{Ports: tr.Ports * n}
	for _, c := range tr.Coflows {
		for i := range n {
			d := c
			shift := i * tr.Ports
			if i > 0 {
				d.ID = c.ID + "." + strconv.Itoa(i)
			}
			d.Mappers = shifted(c.Mappers, shift)
			d.Reducers = shifted(c.Reducers, shift)
			d.Flows = make([]TraceFlow, len(c.Flows))
			for j, f := range c.Flows {
				d.Flows[j] = TraceFlow{Src: f.Src + shift, Dst: f.Dst + shift, Bytes: f.Bytes}
			}
			out.Coflows = append(out.Coflows, d)
		}
	}
	return out
}

func shifted(ports []int, by int) []int {
	out := make([]int, len(ports))
	for i, p := range ports {
		out[i] = p + by
	}
	return out
}

// MantriLike gives every coflow with more than one mapper mapper-side skew,
// keeping each reducer's total (docs/coflow.md): a target coefficient of
// variation v with ln v ~ N(ln 0.34, 1.725²) (median 0.34, P90 3.1), mapper
// weights w_j ~ LogNormal(0, ln(1+v²)), and flow (j, i) gets reducer i's
// bytes · w_j / Σw. The result uses the per-flow format.
func MantriLike(tr *Trace, seed uint64) *Trace {
	rng := rand.New(rand.NewPCG(seed, 0x6d616e747269))
	out := &Trace{Ports: tr.Ports}
	for _, c := range tr.Coflows {
		if len(c.Mappers) < 2 || c.PerFlow {
			out.Coflows = append(out.Coflows, c)
			continue
		}
		v := math.Exp(math.Log(0.34) + 1.725*rng.NormFloat64())
		sigma := math.Sqrt(math.Log(1 + v*v))
		w := make([]float64, len(c.Mappers))
		sum := 0.0
		for j := range w {
			w[j] = math.Exp(sigma * rng.NormFloat64())
			sum += w[j]
		}
		d := c
		d.PerFlow, d.ReducerMB, d.Flows = true, nil, nil
		for j, m := range c.Mappers {
			for i, r := range c.Reducers {
				if b := int64(math.Round(c.ReducerMB[i] * MB * w[j] / sum)); b > 0 {
					d.Flows = append(d.Flows, TraceFlow{Src: m, Dst: r, Bytes: b})
				}
			}
		}
		if len(d.Flows) > 0 {
			out.Coflows = append(out.Coflows, d)
		}
	}
	return out
}

// SynthOptions configures Synthesize.
type SynthOptions struct {
	// Coflows to draw and Ports of the fabric.
	Coflows, Ports int
	// MeanArrival is the mean time between Poisson arrivals in ms (FB2010:
	// 6,900); Load divides it.
	MeanArrivalMs float64
	Load          float64
	Seed          uint64
}

// DefaultSynthOptions is FB2010's size: 526 coflows on 150 ports, one every
// 6.9 s on average, load 1.
func DefaultSynthOptions() SynthOptions {
	return SynthOptions{Coflows: 526, Ports: 150, MeanArrivalMs: 6900, Load: 1, Seed: 1}
}

// Synthesize draws a synthetic trace with the statistics of base
// (docs/coflow.md, bootstrap mode): each coflow is a coflow of base drawn with
// replacement, keeping its mapper and reducer counts and its reducers'
// megabytes, placed on random distinct mapper ports and random distinct
// reducer ports of the fabric; arrivals are Poisson.
func Synthesize(base *Trace, o SynthOptions) (*Trace, error) {
	var pool []TraceCoflow
	for _, c := range base.Coflows {
		if !c.PerFlow && len(c.Mappers) <= o.Ports && len(c.Reducers) <= o.Ports {
			pool = append(pool, c)
		}
	}
	switch {
	case len(pool) == 0:
		return nil, fmt.Errorf("%w: no coflow of the base trace fits %d ports", ErrBadSimulation, o.Ports)
	case o.Coflows <= 0 || o.Ports <= 0 || !(o.MeanArrivalMs > 0) || !(o.Load > 0):
		return nil, fmt.Errorf("%w: synthetic trace of %d coflows on %d ports, mean arrival %v ms, load %v",
			ErrBadSimulation, o.Coflows, o.Ports, o.MeanArrivalMs, o.Load)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x73796e7468))
	out := &Trace{Ports: o.Ports}
	t := 0.0
	for i := range o.Coflows {
		src := pool[rng.IntN(len(pool))]
		c := TraceCoflow{ID: strconv.Itoa(i + 1), ArrivalMs: int64(math.Round(t)),
			ReducerMB: slices.Clone(src.ReducerMB)}
		c.Mappers = rng.Perm(o.Ports)[:len(src.Mappers)]
		c.Reducers = rng.Perm(o.Ports)[:len(src.Reducers)]
		c.Flows = spreadFlows(c.Mappers, c.Reducers, c.ReducerMB)
		if len(c.Flows) > 0 {
			out.Coflows = append(out.Coflows, c)
		}
		t += rng.ExpFloat64() * o.MeanArrivalMs / o.Load
	}
	return out, nil
}
