package main

import (
	"context"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// startRanks runs ranks 0..size-1 of a run in this process, on loopback,
// except those in skip, and returns their results and errors by rank.
func startRanks(t *testing.T, size, vectorLen, intervals int, step time.Duration, skip map[int]bool) ([]result, []error) {
	t.Helper()
	lns := make([]*net.TCPListener, size)
	for r := range lns {
		ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		lns[r] = ln
	}
	root := lns[0].Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, errs := make([]result, size), make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		if skip[r] {
			lns[r].Close()
			continue
		}
		cfg := rankConfig{Rank: r, Size: size, Root: root, Port: lns[r].Addr().(*net.TCPAddr).Port,
			Host: "127.0.0.1", VectorLen: vectorLen, Intervals: intervals, Step: step}
		wg.Go(func() { res[r], errs[r] = runRankOn(ctx, cfg, lns[r]) })
	}
	wg.Wait()
	return res, errs
}

func TestRank_RingAllreduce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                       string
		size, vectorLen, intervals int
	}{
		{"one rank", 1, 10, 100},
		{"two ranks", 2, 1000, 10000},
		{"three ranks", 3, 1001, 99999},
		{"more ranks than elements", 5, 3, 1000},
		{"one element", 4, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, errs := startRanks(t, tc.size, tc.vectorLen, tc.intervals, 5*time.Second, nil)
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			e := expect(tc.size, tc.vectorLen, tc.intervals)
			got := res[0]
			if got.Checksum != e.Checksum {
				t.Errorf("checksum: got %.17g, want %.17g", got.Checksum, e.Checksum)
			}
			if fmt.Sprint(got.Samples) != fmt.Sprint(e.Samples) {
				t.Errorf("samples: got %v, want %v", got.Samples, e.Samples)
			}
			if d := math.Abs(got.Pi - e.Pi); d > piTolerance {
				t.Errorf("pi: got %.17g, want %.17g", got.Pi, e.Pi)
			}
			if got.Agreed != tc.size {
				t.Errorf("agreed: got %d, want %d", got.Agreed, tc.size)
			}
			for r := 1; r < tc.size; r++ {
				if res[r].Checksum != got.Checksum || res[r].Pi != got.Pi {
					t.Errorf("rank %d found %.17g and %.17g, rank 0 %.17g and %.17g",
						r, res[r].Checksum, res[r].Pi, got.Checksum, got.Pi)
				}
			}
		})
	}
}

// TestRank_MissingRankTimesOut: a rank that never starts makes the others
// fail on their deadlines with a message, not hang.
func TestRank_MissingRankTimesOut(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, errs := startRanks(t, 3, 10, 100, 200*time.Millisecond, map[int]bool{2: true})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("ranks gave up after %s", took)
	}
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "join") {
		t.Errorf("rank 0: %v, want an error about ranks joining", errs[0])
	}
	if errs[1] == nil {
		t.Error("rank 1 succeeded without rank 2")
	}
}

func TestRankEnv(t *testing.T) {
	env := map[string]string{envRank: "1", envSize: "3", envPort0: "31001", envRoot: "10.0.0.1:31000",
		envAgentHTTP: "10.0.0.2:5051"}
	cfg, err := rankEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Rank != 1 || cfg.Size != 3 || cfg.Port != 31001 || cfg.Root != "10.0.0.1:31000" || cfg.Host != "10.0.0.2" {
		t.Fatalf("got %+v", cfg)
	}
	env[envAgentHTTP] = "0.0.0.0:5051"
	if cfg, _ = rankEnv(func(k string) string { return env[k] }); cfg.Host != "" {
		t.Errorf("host %q from a wildcard agent address, want none", cfg.Host)
	}
	for _, bad := range []map[string]string{
		{envRank: "3", envSize: "3", envPort0: "1", envRoot: "h:1"},
		{envRank: "0", envSize: "3", envPort0: "", envRoot: "h:1"},
		{envRank: "0", envSize: "3", envPort0: "1", envRoot: "nohost"},
	} {
		if _, err := rankEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("rankEnv(%v): no error", bad)
		}
	}
}

func TestExpect(t *testing.T) {
	const size, n = 3, 1000
	e := expect(size, n, 100000)
	// Σ_r (r+1) = 6; the vector is 6·(i mod 1000 + 1); weights i mod 7 + 1.
	var want float64
	for i := range n {
		want += float64(i%7+1) * float64(6*(i%1000+1))
	}
	if e.Checksum != want {
		t.Errorf("checksum %.17g, want %.17g", e.Checksum, want)
	}
	if math.Abs(e.Pi-math.Pi) > piBound(100000) {
		t.Errorf("pi %.17g, off by %.3g", e.Pi, math.Abs(e.Pi-math.Pi))
	}
	if got := sampleIndexes(1); len(got) != 1 || got[0] != 0 {
		t.Errorf("sampleIndexes(1) = %v", got)
	}
}
