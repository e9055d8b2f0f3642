package phoenix

import (
	"slices"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// partitionFixture is a Cloudera-like cluster of 200 workers (a
// short-only partition of 18, Eagle's: ids 0-17) and the signature of jobs
// that need an arm64 worker.
func partitionFixture(t *testing.T) (*engine, *signature) {
	t.Helper()
	s := newEngine(smallConfig("cloudera", SchedPhoenix, 1).resolved())
	arm := s.ix.sig(s.ix.classIDs([]protocol.Constraint{newConstraint("arch", protocol.OpEq, "arm64", false)}))
	if s.bigFrom != 18 {
		t.Fatalf("short-only partition of %d workers, want 18", s.bigFrom)
	}
	if len(arm.all) < 8 {
		t.Fatalf("only %d arm64 workers; the fixture needs at least 8", len(arm.all))
	}
	return s, arm
}

// shortOnlyIn counts the workers of list in the short-only partition.
func shortOnlyIn(s *engine, list []int32) int {
	n := 0
	for _, w := range list {
		if s.ix.shortOnly.has(int(w)) {
			n++
		}
	}
	return n
}

// A third of the short work needs arm64, so arm64 workers get a third of the
// short-only partition: 6 of 18. The arm64 workers already in it stay (the
// partition moves as little as it can); the universe's 12 are the lowest
// ids of Eagle's partition not yet chosen; the size is kept.
func TestPhoenixPartition_shapedByShortDemand(t *testing.T) {
	s, arm := partitionFixture(t)
	before := shortOnlyIn(s, arm.all)
	if before >= 6 {
		t.Fatalf("Eagle's partition already holds %d arm64 workers; the fixture needs fewer than 6", before)
	}
	eagle := s.ix.shortOnly.members()
	period := float64(s.repartitionTicks()) * crvPeriod
	arm.shortWork, s.ix.universe.shortWork = 1*period, 2*period
	s.repartition()

	if n := s.ix.shortOnly.count(); n != 18 {
		t.Fatalf("short-only partition of %d workers after repartitioning, want 18", n)
	}
	if n := shortOnlyIn(s, arm.all); n != 6 {
		t.Fatalf("%d arm64 workers short-only, want 6 (a third of 18; Eagle's partition had %d)", n, before)
	}
	var keptOthers []int32
	for _, w := range eagle {
		if arm.bits.has(int(w)) {
			if !s.ix.shortOnly.has(int(w)) {
				t.Errorf("arm64 worker %d left the partition though arm64 short work needs more", w)
			}
			continue
		}
		if s.ix.shortOnly.has(int(w)) {
			keptOthers = append(keptOthers, w)
		}
	}
	if len(keptOthers) != 12 {
		t.Fatalf("%d of Eagle's other short-only workers kept, want 12", len(keptOthers))
	}
	for i, w := range keptOthers {
		if w != eagleOthers(eagle, arm)[i] {
			t.Fatalf("kept %v of Eagle's other workers, want the 12 lowest ids", keptOthers)
		}
	}
	for _, sg := range s.ix.sigs {
		if len(sg.short)+len(sg.big) != len(sg.all) || shortOnlyIn(s, sg.short) != len(sg.short) || shortOnlyIn(s, sg.big) != 0 {
			t.Fatalf("signature %q is not split by the new partition", sg.key)
		}
	}

	// The same demand again moves nothing.
	first := s.ix.shortOnly.members()
	arm.shortWork, s.ix.universe.shortWork = 1*period, 2*period
	s.repartition()
	if got := s.ix.shortOnly.members(); !slices.Equal(got, first) {
		t.Fatalf("an unchanged demand moved the partition: %v, then %v", first, got)
	}
}

// eagleOthers is the 12 lowest ids of Eagle's partition that are not arm64.
func eagleOthers(eagle []int32, arm *signature) []int32 {
	var out []int32
	for _, w := range eagle {
		if !arm.bits.has(int(w)) && len(out) < 12 {
			out = append(out, w)
		}
	}
	return out
}

// When every short job needs arm64 and there are fewer arm64 workers than
// the partition's size, all of them become short-only and the rest of the
// partition is filled from Eagle's, so the size is still kept.
func TestPhoenixPartition_restrictedDemandTakesItsWholeSet(t *testing.T) {
	s, arm := partitionFixture(t)
	if len(arm.all) >= 18 {
		t.Fatalf("%d arm64 workers; the fixture needs fewer than 18", len(arm.all))
	}
	arm.shortWork = 5
	s.repartition()
	if n := shortOnlyIn(s, arm.all); n != len(arm.all) {
		t.Fatalf("%d of %d arm64 workers short-only, want all", n, len(arm.all))
	}
	if n := s.ix.shortOnly.count(); n != 18 {
		t.Fatalf("short-only partition of %d workers, want 18", n)
	}
}

// Over whole runs the partition keeps its size, is reshaped, and with
// shaping off never moves.
func TestPhoenixPartition_runs(t *testing.T) {
	for _, trace := range Traces() {
		s := mustRun(t, smallConfig(trace, SchedPhoenix, 2))
		if s.repartitions == 0 {
			t.Fatalf("%s: the partition was never reshaped", trace)
		}
		if n := s.ix.shortOnly.count(); n != s.bigFrom {
			t.Fatalf("%s: short-only partition of %d workers, want %d", trace, n, s.bigFrom)
		}
		off := smallConfig(trace, SchedPhoenix, 2)
		off.NoPartition = true
		s = mustRun(t, off)
		if s.repartitions != 0 {
			t.Fatalf("%s: reshaped %d times with shaping off", trace, s.repartitions)
		}
		for w := range s.workers {
			if s.ix.shortOnly.has(w) != (w < s.bigFrom) {
				t.Fatalf("%s: worker %d moved partition with shaping off", trace, w)
			}
		}
	}
}
