package coflowsim

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MB is the trace unit: Coflow-Benchmark sizes are in megabytes of 2^20
// bytes, as CoflowSim reads them.
const MB = 1 << 20

// ErrBadTrace reports a coflow trace that cannot be read. Errors about one
// line are *TraceError, which wraps it.
var ErrBadTrace = errors.New("bad coflow trace")

// TraceError is a malformed line of a coflow trace.
type TraceError struct {
	Line int    // 1-based line number
	Msg  string // what is wrong with it
}

func (e *TraceError) Error() string { return fmt.Sprintf("coflow trace line %d: %s", e.Line, e.Msg) }

// Unwrap makes errors.Is(err, ErrBadTrace) hold.
func (e *TraceError) Unwrap() error { return ErrBadTrace }

// Trace is a set of coflows on a fabric of Ports ports, in the
// Coflow-Benchmark model (docs/coflow.md, "Traces"): every coflow is a set of
// mappers sending to a set of reducers, one flow per (mapper, reducer) pair.
type Trace struct {
	Ports int
	// Coflows in arrival order (stable for equal arrivals).
	Coflows []TraceCoflow
}

// TraceCoflow is one coflow of a trace.
type TraceCoflow struct {
	// ID is the trace's coflow id.
	ID string
	// ArrivalMs is the arrival time in milliseconds from the trace start.
	ArrivalMs int64
	// Mappers and Reducers are the sending and receiving ports.
	Mappers, Reducers []int
	// Flows are the coflow's non-empty flows, mapper-major (for each mapper,
	// its flows to the reducers in reducer order).
	Flows []TraceFlow
	// PerFlow says the flow sizes were given one by one (the per-flow
	// format); otherwise each reducer's bytes are spread evenly over the
	// mappers and ReducerMB holds the reducer totals.
	PerFlow   bool
	ReducerMB []float64
}

// TraceFlow is one flow: Bytes from port Src to port Dst.
type TraceFlow struct {
	Src, Dst int
	Bytes    int64
}

// Bytes is the coflow's total size.
func (c *TraceCoflow) Bytes() int64 {
	var s int64
	for _, f := range c.Flows {
		s += f.Bytes
	}
	return s
}

// Skew is the coflow's largest flow over its smallest (1 for one flow).
func (c *TraceCoflow) Skew() float64 {
	if len(c.Flows) == 0 {
		return 1
	}
	lo, hi := c.Flows[0].Bytes, c.Flows[0].Bytes
	for _, f := range c.Flows {
		lo, hi = min(lo, f.Bytes), max(hi, f.Bytes)
	}
	return float64(hi) / float64(lo)
}

// spreadFlows builds the flows of a coflow in the public format: reducer i's
// ReducerMB[i] megabytes spread evenly over the mappers (rounded to whole
// bytes), mapper-major, empty flows dropped.
func spreadFlows(mappers, reducers []int, reducerMB []float64) []TraceFlow {
	flows := make([]TraceFlow, 0, len(mappers)*len(reducers))
	for _, m := range mappers {
		for i, r := range reducers {
			b := int64(math.Round(reducerMB[i] * MB / float64(len(mappers))))
			if b > 0 {
				flows = append(flows, TraceFlow{Src: m, Dst: r, Bytes: b})
			}
		}
	}
	return flows
}

// ParseTrace reads a trace in the Coflow-Benchmark format:
//
//	<ports> <coflows>
//	<id> <arrival ms> <M> <mapper port>... <R> <reducer port>:<MB>...
//
// Each reducer's megabytes are spread evenly over the coflow's mappers. A
// coflow line may instead give every flow (the per-flow extension of the
// Philae simulator, which the Mantri-like trace needs):
//
//	<id> <arrival ms> <M> <mapper port>... <R> <reducer port> <bytes from mapper 1>...<bytes from mapper M> ...
//
// Blank lines and lines starting with # are skipped. Flows of zero bytes are
// dropped; a coflow without any flow left is kept out of the trace, since it
// has nothing to schedule. Coflows are sorted by arrival, stably.
func ParseTrace(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	tr := &Trace{}
	line, want := 0, -1
	seen := map[string]bool{}
	count := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if want < 0 {
			if len(fields) != 2 {
				return nil, &TraceError{line, "header: want <ports> <coflows>"}
			}
			p, err1 := strconv.Atoi(fields[0])
			n, err2 := strconv.Atoi(fields[1])
			if err1 != nil || err2 != nil || p <= 0 || n < 0 {
				return nil, &TraceError{line, fmt.Sprintf("header %q: want a positive port count and a coflow count", text)}
			}
			tr.Ports, want = p, n
			continue
		}
		c, err := parseCoflowLine(fields, tr.Ports)
		if err != nil {
			return nil, &TraceError{line, err.Error()}
		}
		if seen[c.ID] {
			return nil, &TraceError{line, fmt.Sprintf("duplicate coflow id %q", c.ID)}
		}
		seen[c.ID] = true
		count++
		if len(c.Flows) > 0 {
			tr.Coflows = append(tr.Coflows, c)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadTrace, err)
	}
	if want < 0 {
		return nil, fmt.Errorf("%w: empty trace", ErrBadTrace)
	}
	if count != want {
		return nil, fmt.Errorf("%w: header says %d coflows, found %d", ErrBadTrace, want, count)
	}
	slices.SortStableFunc(tr.Coflows, func(a, b TraceCoflow) int { return cmp.Compare(a.ArrivalMs, b.ArrivalMs) })
	return tr, nil
}

// fieldReader walks a coflow line's fields.
type fieldReader struct {
	fields []string
	at     int
}

func (r *fieldReader) next(what string) (string, error) {
	if r.at >= len(r.fields) {
		return "", fmt.Errorf("line ends before %s", what)
	}
	r.at++
	return r.fields[r.at-1], nil
}

func (r *fieldReader) int(what string, lo, hi int) (int, error) {
	s, err := r.next(what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s %q: want an integer in [%d, %d]", what, s, lo, hi)
	}
	return v, nil
}

func parseCoflowLine(fields []string, ports int) (TraceCoflow, error) {
	r := &fieldReader{fields: fields}
	var c TraceCoflow
	var err error
	if c.ID, err = r.next("the coflow id"); err != nil {
		return c, err
	}
	s, err := r.next("the arrival time")
	if err != nil {
		return c, err
	}
	if c.ArrivalMs, err = strconv.ParseInt(s, 10, 64); err != nil || c.ArrivalMs < 0 {
		return c, fmt.Errorf("arrival %q: want a non-negative integer of milliseconds", s)
	}
	m, err := r.int("the mapper count", 1, ports)
	if err != nil {
		return c, err
	}
	used := map[int]bool{}
	for range m {
		p, err := r.int("a mapper port", 0, ports-1)
		if err != nil {
			return c, err
		}
		if used[p] {
			return c, fmt.Errorf("mapper port %d listed twice", p)
		}
		used[p] = true
		c.Mappers = append(c.Mappers, p)
	}
	n, err := r.int("the reducer count", 1, ports)
	if err != nil {
		return c, err
	}
	clear(used)
	for i := range n {
		tok, err := r.next("a reducer")
		if err != nil {
			return c, err
		}
		portText, mbText, public := strings.Cut(tok, ":")
		if i == 0 {
			c.PerFlow = !public
		} else if c.PerFlow == public {
			return c, fmt.Errorf("reducer %q: a line mixes the public and the per-flow format", tok)
		}
		p, err := strconv.Atoi(portText)
		if err != nil || p < 0 || p >= ports {
			return c, fmt.Errorf("reducer port %q: want an integer in [0, %d]", portText, ports-1)
		}
		if used[p] {
			return c, fmt.Errorf("reducer port %d listed twice", p)
		}
		used[p] = true
		c.Reducers = append(c.Reducers, p)
		if public {
			mb, err := strconv.ParseFloat(mbText, 64)
			if err != nil || mb < 0 || math.IsInf(mb, 0) || math.IsNaN(mb) {
				return c, fmt.Errorf("reducer %q: want <port>:<megabytes>, megabytes >= 0", tok)
			}
			c.ReducerMB = append(c.ReducerMB, mb)
			continue
		}
		for _, mp := range c.Mappers {
			s, err := r.next("a flow size")
			if err != nil {
				return c, err
			}
			b, err := strconv.ParseInt(s, 10, 64)
			if err != nil || b < 0 {
				return c, fmt.Errorf("flow size %q: want a non-negative integer of bytes", s)
			}
			if b > 0 {
				c.Flows = append(c.Flows, TraceFlow{Src: mp, Dst: p, Bytes: b})
			}
		}
	}
	if r.at != len(fields) {
		return c, fmt.Errorf("%d unexpected fields after the last reducer", len(fields)-r.at)
	}
	if c.PerFlow {
		sortMapperMajor(&c)
	} else {
		c.Flows = spreadFlows(c.Mappers, c.Reducers, c.ReducerMB)
	}
	return c, nil
}

// sortMapperMajor orders per-flow flows mapper-major (they are read
// reducer-major).
func sortMapperMajor(c *TraceCoflow) {
	mi := make(map[int]int, len(c.Mappers))
	for i, p := range c.Mappers {
		mi[p] = i
	}
	ri := make(map[int]int, len(c.Reducers))
	for i, p := range c.Reducers {
		ri[p] = i
	}
	slices.SortStableFunc(c.Flows, func(a, b TraceFlow) int {
		if d := mi[a.Src] - mi[b.Src]; d != 0 {
			return d
		}
		return ri[a.Dst] - ri[b.Dst]
	})
}

// WriteTrace writes tr in the format ParseTrace reads: the
// public form for coflows with reducer totals, the per-flow form (bytes)
// for the others.
func WriteTrace(w io.Writer, tr *Trace) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d %d\n", tr.Ports, len(tr.Coflows))
	for i := range tr.Coflows {
		c := &tr.Coflows[i]
		fmt.Fprintf(bw, "%s %d %d", c.ID, c.ArrivalMs, len(c.Mappers))
		for _, p := range c.Mappers {
			fmt.Fprintf(bw, " %d", p)
		}
		fmt.Fprintf(bw, " %d", len(c.Reducers))
		if !c.PerFlow {
			for i, p := range c.Reducers {
				fmt.Fprintf(bw, " %d:%s", p, strconv.FormatFloat(c.ReducerMB[i], 'f', -1, 64))
			}
			bw.WriteByte('\n')
			continue
		}
		size := make(map[[2]int]int64, len(c.Flows))
		for _, f := range c.Flows {
			size[[2]int{f.Src, f.Dst}] = f.Bytes
		}
		for _, r := range c.Reducers {
			fmt.Fprintf(bw, " %d", r)
			for _, m := range c.Mappers {
				fmt.Fprintf(bw, " %d", size[[2]int{m, r}])
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
