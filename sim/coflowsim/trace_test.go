package coflowsim

import (
	"bytes"
	"errors"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseCoflowTrace_SpreadsReducerBytesOverMappers(t *testing.T) {
	t.Parallel()
	// Coflow 7 arrives after 9 but is listed first: the parser sorts. Its
	// reducer 2 receives 3 MB from two mappers: 1.5 MB per flow; reducer 3
	// receives nothing, so its flows are dropped. Coflow 9 has one empty
	// reducer only and is left out (nothing to schedule).
	in := `# a comment
4 3

7 500 2 0 1 2 2:3.0 3:0
9 100 1 3 1 1:2
8 100 1 0 1 1:0.0
`
	tr, err := ParseTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Ports != 4 || len(tr.Coflows) != 2 {
		t.Fatalf("got %d ports and %d coflows, want 4 and 2", tr.Ports, len(tr.Coflows))
	}
	if got := []string{tr.Coflows[0].ID, tr.Coflows[1].ID}; !reflect.DeepEqual(got, []string{"9", "7"}) {
		t.Errorf("order %v, want [9 7] (by arrival)", got)
	}
	c := tr.Coflows[1]
	want := []TraceFlow{{Src: 0, Dst: 2, Bytes: 3 * MB / 2}, {Src: 1, Dst: 2, Bytes: 3 * MB / 2}}
	if !reflect.DeepEqual(c.Flows, want) {
		t.Errorf("flows %+v, want %+v", c.Flows, want)
	}
	if c.ArrivalMs != 500 || c.Bytes() != 3*MB || c.Skew() != 1 {
		t.Errorf("arrival %d, bytes %d, skew %v; want 500, %d, 1", c.ArrivalMs, c.Bytes(), c.Skew(), 3*MB)
	}
}

func TestParseCoflowTrace_PerFlowFormatRoundTrips(t *testing.T) {
	t.Parallel()
	// Mappers 0 and 1, reducers 2 and 3; reducer 2 gets 10 and 0 bytes,
	// reducer 3 gets 30 and 40: three flows, mapper-major.
	in := "4 2\n1 0 2 0 1 2 2 10 0 3 30 40\n2 5 1 3 2 0:1 1:2.5\n"
	tr, err := ParseTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceFlow{{0, 2, 10}, {0, 3, 30}, {1, 3, 40}}
	if got := tr.Coflows[0].Flows; !tr.Coflows[0].PerFlow || !reflect.DeepEqual(got, want) {
		t.Errorf("flows %+v (per-flow %v), want %+v", got, tr.Coflows[0].PerFlow, want)
	}
	if s := tr.Coflows[0].Skew(); s != 4 {
		t.Errorf("skew %v, want 4", s)
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, tr); err != nil {
		t.Fatal(err)
	}
	back, err := ParseTrace(&buf)
	if err != nil {
		t.Fatalf("reparse: %v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back, tr) {
		t.Errorf("round trip: got %+v, want %+v", back, tr)
	}
}

func TestParseCoflowTrace_Malformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		line int // 0: not about one line
	}{
		{"empty", "", 0},
		{"header fields", "150\n", 1},
		{"header not a number", "x 1\n", 1},
		{"coflow count", "4 2\n1 0 1 0 1 1:1\n", 0},
		{"short line", "4 1\n1 0 2 0\n", 2},
		{"arrival", "4 1\n1 -5 1 0 1 1:1\n", 2},
		{"mapper port out of range", "4 1\n1 0 1 4 1 1:1\n", 2},
		{"mapper count", "4 1\n1 0 0 1 1:1\n", 2},
		{"duplicate mapper", "4 1\n1 0 2 0 0 1 1:1\n", 2},
		{"duplicate reducer", "4 1\n# c\n1 0 1 0 2 1:1 1:2\n", 3},
		{"reducer megabytes", "4 1\n1 0 1 0 1 1:x\n", 2},
		{"negative megabytes", "4 1\n1 0 1 0 1 1:-1\n", 2},
		{"trailing fields", "4 1\n1 0 1 0 1 1:1 7\n", 2},
		{"mixed formats", "4 1\n1 0 1 0 2 1:1 2 5\n", 2},
		{"per-flow size", "4 1\n1 0 1 0 1 1 -3\n", 2},
		{"duplicate id", "4 2\n1 0 1 0 1 1:1\n1 5 1 0 1 1:1\n", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTrace(strings.NewReader(tc.in))
			if !errors.Is(err, ErrBadTrace) {
				t.Fatalf("got %v, want ErrBadTrace", err)
			}
			var te *TraceError
			if tc.line > 0 && (!errors.As(err, &te) || te.Line != tc.line) {
				t.Errorf("got %v, want a *TraceError on line %d", err, tc.line)
			}
		})
	}
}

// fb2010 is the public trace (testdata/PROVENANCE.md).
func fb2010(t testing.TB) *Trace {
	t.Helper()
	f, err := os.Open("testdata/FB2010-1Hr-150-0.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ParseTrace(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestFB2010_Statistics(t *testing.T) {
	t.Parallel()
	// docs/coflow.md: 150 ports, 526 coflows, 706,397 flows (M×R); the paper's
	// thin/wide split; the sizes of the low-skew-filtered traces.
	tr := fb2010(t)
	sh := tr.Shape()
	if sh.Ports != 150 || sh.Coflows != 526 || sh.Flows != 706397 {
		t.Errorf("shape %+v, want 150 ports, 526 coflows, 706397 flows", sh)
	}
	if n := len(WideOnly(tr, 7).Coflows); n != 269 {
		t.Errorf("wide coflows: %d, want 269", n)
	}
	for k, want := range []int{142, 100, 64, 50, 43} {
		if n := len(FilterSkew(tr, float64(k+1)).Coflows); n != want {
			t.Errorf("skew > %d: %d coflows, want %d", k+1, n, want)
		}
	}
	six := Replicate(tr, 6)
	if s := six.Shape(); s.Ports != 900 || s.Coflows != 3156 || s.Flows != 6*706397 {
		t.Errorf("×6: %+v, want 900 ports, 3156 coflows", s)
	}
}

func TestDerivedTraces(t *testing.T) {
	t.Parallel()
	tr := fb2010(t)
	// Mantri-like skew keeps every reducer's total (up to rounding) and
	// every coflow's structure.
	m := MantriLike(tr, 7)
	if len(m.Coflows) != len(tr.Coflows) {
		t.Fatalf("mantri-like: %d coflows, want %d", len(m.Coflows), len(tr.Coflows))
	}
	skewed := 0
	for i := range tr.Coflows {
		a, b := tr.Coflows[i].Bytes(), m.Coflows[i].Bytes()
		if d := a - b; d > int64(len(tr.Coflows[i].Flows)) || -d > int64(len(tr.Coflows[i].Flows)) {
			t.Fatalf("coflow %s: %d bytes became %d", tr.Coflows[i].ID, a, b)
		}
		if m.Coflows[i].Skew() > 2*tr.Coflows[i].Skew() {
			skewed++
		}
	}
	if skewed < 100 {
		t.Errorf("only %d coflows got mapper skew", skewed)
	}
	if again := MantriLike(tr, 7); !reflect.DeepEqual(again, m) {
		t.Error("MantriLike is not deterministic")
	}
	o := DefaultSynthOptions()
	o.Ports, o.Coflows = 900, 100
	syn, err := Synthesize(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	if syn.Ports != 900 || len(syn.Coflows) != 100 {
		t.Errorf("synthetic: %d ports, %d coflows, want 900 and 100", syn.Ports, len(syn.Coflows))
	}
	for _, c := range syn.Coflows {
		for _, f := range c.Flows {
			if f.Src >= 900 || f.Dst >= 900 {
				t.Fatalf("coflow %s: flow %d->%d off the fabric", c.ID, f.Src, f.Dst)
			}
		}
	}
	if _, err := Synthesize(tr, SynthOptions{Coflows: 0, Ports: 150, MeanArrivalMs: 1, Load: 1}); !errors.Is(err, ErrBadSimulation) {
		t.Errorf("no coflows: got %v, want ErrBadSimulation", err)
	}
}

// TestFold: FB2010 folded onto 8 ports keeps every coflow, with at most
// 64 flows each, all on the 8 ports, its bytes scaled (up to a byte a
// flow), its arrival scaled, and it survives the per-flow format.
func TestFold(t *testing.T) {
	t.Parallel()
	tr := fb2010(t)
	f, err := Fold(tr, 8, 1e-3, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Ports != 8 || len(f.Coflows) != len(tr.Coflows) {
		t.Fatalf("%d ports, %d coflows; want 8 and %d", f.Ports, len(f.Coflows), len(tr.Coflows))
	}
	for i, c := range f.Coflows {
		o := tr.Coflows[i]
		if len(c.Flows) > 64 || len(c.Flows) > len(o.Flows) {
			t.Fatalf("coflow %s: %d flows from %d", c.ID, len(c.Flows), len(o.Flows))
		}
		want := float64(o.Bytes()) * 1e-3
		if got := float64(c.Bytes()); math.Abs(got-want) > float64(len(c.Flows)) {
			t.Fatalf("coflow %s: %g bytes, want %g", c.ID, got, want)
		}
		if d := c.ArrivalMs - (o.ArrivalMs+5)/10; d < -1 || d > 1 {
			t.Fatalf("coflow %s: arrival %d ms from %d", c.ID, c.ArrivalMs, o.ArrivalMs)
		}
		for _, fl := range c.Flows {
			if fl.Src >= 8 || fl.Dst >= 8 || fl.Bytes < 1 {
				t.Fatalf("coflow %s: flow %+v", c.ID, fl)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, f); err != nil {
		t.Fatal(err)
	}
	back, err := ParseTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Coflows[100].Flows, f.Coflows[100].Flows) {
		t.Fatalf("per-flow round trip: %+v, want %+v", back.Coflows[100].Flows, f.Coflows[100].Flows)
	}
	// Egress only: the same senders and sizes, every flow into a port of
	// its own.
	eo := EgressOnly(f)
	seen := map[int]bool{}
	for i, c := range eo.Coflows {
		if len(c.Flows) != len(f.Coflows[i].Flows) || c.Bytes() != f.Coflows[i].Bytes() {
			t.Fatalf("egress only, coflow %s: %d flows of %d bytes, want %d of %d", c.ID, len(c.Flows), c.Bytes(),
				len(f.Coflows[i].Flows), f.Coflows[i].Bytes())
		}
		for j, fl := range c.Flows {
			if fl.Src != f.Coflows[i].Flows[j].Src || fl.Dst < 8 || fl.Dst >= eo.Ports || seen[fl.Dst] {
				t.Fatalf("egress only, coflow %s: flow %+v", c.ID, fl)
			}
			seen[fl.Dst] = true
		}
	}
	for _, bad := range [][3]float64{{0, 1, 1}, {8, 0, 1}, {8, 1, -1}, {8, math.NaN(), 1}} {
		if _, err := Fold(tr, int(bad[0]), bad[1], bad[2]); !errors.Is(err, ErrBadSimulation) {
			t.Errorf("fold %v: got %v, want ErrBadSimulation", bad, err)
		}
	}
}
