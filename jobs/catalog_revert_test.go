package jobs

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// TestRevert: reverting to a kept version makes its file the next
// version; a version not kept is an invalid argument.
func TestRevert(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	ctx := t.Context()
	v1, v2 := webSrc(2, "1"), webSrc(3, "2")
	mustSubmit(t, s, v1, catalogNow)
	mustSubmit(t, s, v2, catalogNow)

	sub, err := Revert(ctx, s, "web", 1, catalogNow.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if want := []GroupChange{{Group: "g", Replace: 2, Stop: 1}}; sub.Version != 3 || sub.Unchanged || !reflect.DeepEqual(sub.Changes, want) ||
		sub.Job == nil || sub.Job.Name != "web" {
		t.Errorf("got %+v, want version 3 of web, changes %+v", sub, want)
	}
	if got, ok := s.value(VersionKey("web", 3)); !ok || got != string(v1) {
		t.Errorf("version 3's file %q, %v; want version 1's", got, ok)
	}
	spec := mustReadSpec(t, s, "web")
	if spec.Version != 3 || !reflect.DeepEqual(spec.Versions, []int{1, 2, 3}) || !spec.UpdatedAt.Equal(catalogNow.Add(time.Minute)) {
		t.Errorf("spec %+v, want version 3 of [1 2 3]", spec)
	}

	rev := s.revision()
	for _, v := range []int{0, 4, 7} {
		if _, err := Revert(ctx, s, "web", v, catalogNow); !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Errorf("revert to version %d: got %v, want it to wrap %v", v, err, protocol.ErrInvalidArgument)
		}
	}
	if _, err := Revert(ctx, s, "db", 1, catalogNow); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Errorf("revert of an unknown job: got %v, want it to wrap %v", err, protocol.ErrInvalidArgument)
	}
	if got := s.revision(); got != rev {
		t.Errorf("failed reverts moved the store's revision from %d to %d", rev, got)
	}
}

// TestSubmit_keepsLastVersions: the store keeps a job's last KeepVersions
// versions; older ones leave the spec record and the store.
func TestSubmit_keepsLastVersions(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	n := KeepVersions + 2
	for i := 1; i <= n; i++ {
		if sub := mustSubmit(t, s, webSrc(1, fmt.Sprint(i)), catalogNow); sub.Version != i {
			t.Fatalf("submission %d made version %d", i, sub.Version)
		}
	}
	spec := mustReadSpec(t, s, "web")
	var want []int
	for v := n - KeepVersions + 1; v <= n; v++ {
		want = append(want, v)
	}
	if spec.Version != n || !reflect.DeepEqual(spec.Versions, want) {
		t.Errorf("spec version %d of %v, want %d of %v", spec.Version, spec.Versions, n, want)
	}
	for v := 1; v <= n; v++ {
		got, ok := s.value(VersionKey("web", v))
		switch kept := slices.Contains(want, v); {
		case kept && (!ok || got != string(webSrc(1, fmt.Sprint(v)))):
			t.Errorf("kept version %d's file: %q, %v", v, got, ok)
		case !kept && ok:
			t.Errorf("version %d is not kept but its key is in the store", v)
		}
	}
	if _, err := Revert(t.Context(), s, "web", 1, catalogNow); !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Errorf("revert to a version no longer kept: got %v, want it to wrap %v", err, protocol.ErrInvalidArgument)
	}
}

// TestSubmit_invalidFile: a file that does not parse is an invalid job,
// and nothing is written.
func TestSubmit_invalidFile(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	ctx := t.Context()
	bad := []byte("job \"web\" {\n  group \"g\" {\n    count = -1\n  }\n}\n")
	for _, withJob := range []bool{false, true} {
		if withJob {
			mustSubmit(t, s, webSrc(1, "1"), catalogNow)
		}
		rev := s.revision()
		sub, err := Submit(ctx, s, "web.hcl", bad, catalogNow)
		if !errors.Is(err, ErrInvalidJob) || sub.Job != nil || sub.Version != 0 {
			t.Errorf("submit (job exists: %v): got %+v, %v; want an error wrapping %v", withJob, sub, err, ErrInvalidJob)
		}
		if _, err := Preview(ctx, s, "web.hcl", bad); !errors.Is(err, ErrInvalidJob) {
			t.Errorf("preview (job exists: %v): got %v, want it to wrap %v", withJob, err, ErrInvalidJob)
		}
		if got := s.revision(); got != rev {
			t.Errorf("job exists: %v: store revision moved from %d to %d", withJob, rev, got)
		}
	}
	if spec := mustReadSpec(t, s, "web"); spec.Version != 1 {
		t.Errorf("spec version %d, want 1", spec.Version)
	}
}

// TestReadSpec_WriteSpec: WriteSpec creates at revision 0 and updates
// only over the revision given, telling the runner each time; ReadSpec
// reads the record and its revision.
func TestReadSpec_WriteSpec(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	ctx := t.Context()

	spec, rev, err := ReadSpec(ctx, s, "web")
	if err != nil || rev != 0 || !reflect.DeepEqual(spec, SpecRecord{}) {
		t.Fatalf("no job: got %+v, %d, %v", spec, rev, err)
	}

	want := SpecRecord{Version: 4, Versions: []int{3, 4}, Parent: "nightly", ParentVersion: 2, UpdatedAt: catalogNow}
	if err := WriteSpec(ctx, s, "web", want, 0); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.value(ChangedKey); v != "web" {
		t.Errorf("%s: %q, want web", ChangedKey, v)
	}
	got, rev, err := ReadSpec(ctx, s, "web")
	item, _, _ := s.Get(ctx, SpecKey("web"))
	if err != nil || rev == 0 || rev != item.Revision || !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v at %d (entry at %d), %v; want %+v", got, rev, item.Revision, err, want)
	}

	before := s.revision()
	if err := WriteSpec(ctx, s, "web", want, 0); !errors.Is(err, protocol.ErrConflict) {
		t.Errorf("create over an existing spec: got %v, want it to wrap %v", err, protocol.ErrConflict)
	}
	if err := WriteSpec(ctx, s, "web", want, rev+100); !errors.Is(err, protocol.ErrConflict) {
		t.Errorf("update at another revision: got %v, want it to wrap %v", err, protocol.ErrConflict)
	}
	if after := s.revision(); after != before {
		t.Errorf("failed writes moved the store's revision from %d to %d (the changed key written?)", before, after)
	}

	want.Stopped = true
	if err := WriteSpec(ctx, s, "db", SpecRecord{Version: 1, Versions: []int{1}}, 0); err != nil {
		t.Fatal(err)
	}
	if err := WriteSpec(ctx, s, "web", want, rev); err != nil {
		t.Fatalf("update at the spec's revision: %v", err)
	}
	if v, _ := s.value(ChangedKey); v != "web" {
		t.Errorf("%s: %q, want web", ChangedKey, v)
	}
	if got, rev2, err := ReadSpec(ctx, s, "web"); err != nil || rev2 <= rev || !got.Stopped {
		t.Errorf("after update: %+v at %d (was %d), %v", got, rev2, rev, err)
	}

	if _, err := s.Put(ctx, SpecKey("bad"), []byte("{")); err != nil {
		t.Fatal(err)
	}
	if _, rev, err := ReadSpec(ctx, s, "bad"); err == nil || rev != 0 {
		t.Errorf("malformed record: got revision %d, %v; want an error", rev, err)
	}
}

// TestAutoRevert: the runner's revert after a failed update makes the
// stable version's file the next version, marked a revert; a version not
// kept, or no job, is refused and writes nothing.
func TestAutoRevert(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	mustSubmit(t, s, webSrc(2, "1"), catalogNow)
	mustSubmit(t, s, webSrc(2, "2"), catalogNow)
	later := catalogNow.Add(time.Minute)
	next, err := AutoRevert(t.Context(), s, "web", 1, later)
	if err != nil || next != 3 {
		t.Fatalf("AutoRevert: %d, %v; want version 3", next, err)
	}
	spec := mustReadSpec(t, s, "web")
	if spec.Version != 3 || !spec.Revert || spec.Stopped || !spec.UpdatedAt.Equal(later) || !slices.Equal(spec.Versions, []int{1, 2, 3}) {
		t.Errorf("spec after the revert: %+v", spec)
	}
	if got, ok := s.value(VersionKey("web", 3)); !ok || got != string(webSrc(2, "1")) {
		t.Errorf("version 3's file: %q, %v; want version 1's", got, ok)
	}
	// A submission after it is not a revert.
	if sub := mustSubmit(t, s, webSrc(2, "4"), catalogNow); sub.Version != 4 || mustReadSpec(t, s, "web").Revert {
		t.Errorf("a submission after the revert: %+v, spec %+v", sub, mustReadSpec(t, s, "web"))
	}
	before := s.revision()
	for _, tc := range []struct {
		name string
		to   int
	}{{"web", 9}, {"nothing", 1}} {
		if _, err := AutoRevert(t.Context(), s, tc.name, tc.to, later); !errors.Is(err, protocol.ErrInvalidArgument) {
			t.Errorf("AutoRevert(%s, %d): %v, want ErrInvalidArgument", tc.name, tc.to, err)
		}
	}
	if s.revision() != before {
		t.Error("a refused revert wrote to the store")
	}
}
