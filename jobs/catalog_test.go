package jobs

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

var catalogNow = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// webSrc is a job file of job "web": one group "g" of count instances
// whose task runs `sleep arg`.
func webSrc(count int, arg string) []byte {
	return fmt.Appendf(nil, `job "web" {
  group "g" {
    count = %d
    task "t" {
      command = "sleep"
      args    = [%q]
      resources {
        cpus = 0.1
        mem  = "16M"
      }
    }
  }
}
`, count, arg)
}

func mustSubmit(t *testing.T, s Store, src []byte, now time.Time) Submitted {
	t.Helper()
	sub, err := Submit(t.Context(), s, "web.hcl", src, now)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return sub
}

func mustReadSpec(t *testing.T, s Store, name string) SpecRecord {
	t.Helper()
	spec, rev, err := ReadSpec(t.Context(), s, name)
	if err != nil || rev == 0 {
		t.Fatalf("read spec of %q: rev %d, %v", name, rev, err)
	}
	return spec
}

// TestSubmit_first: a job's first submission is version 1: its file kept,
// its spec record written, the runner told which job changed, every
// instance started.
func TestSubmit_first(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	src := webSrc(2, "1")
	sub := mustSubmit(t, s, src, catalogNow)
	if sub.Version != 1 || sub.Unchanged || sub.Job == nil || sub.Job.Name != "web" {
		t.Fatalf("got %+v, want version 1 of web", sub)
	}
	if want := []GroupChange{{Group: "g", Start: 2}}; !reflect.DeepEqual(sub.Changes, want) {
		t.Errorf("changes %+v, want %+v", sub.Changes, want)
	}
	spec := mustReadSpec(t, s, "web")
	if spec.Version != 1 || !reflect.DeepEqual(spec.Versions, []int{1}) || spec.Stopped || spec.Revert || !spec.UpdatedAt.Equal(catalogNow) {
		t.Errorf("spec %+v, want version 1 of [1], updated at %v", spec, catalogNow)
	}
	if v, ok := s.value(VersionKey("web", 1)); !ok || v != string(src) {
		t.Errorf("version 1's file: %q, %v; want the file submitted", v, ok)
	}
	if v, ok := s.value(ChangedKey); !ok || v != "web" {
		t.Errorf("%s: %q, %v; want web", ChangedKey, v, ok)
	}
	if got, want := s.keys(), []string{SpecKey("web"), VersionKey("web", 1), ChangedKey}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
}

// TestSubmit_sameFileUnchanged: the file that runs, submitted again, is
// the version that runs, and nothing is written.
func TestSubmit_sameFileUnchanged(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	mustSubmit(t, s, webSrc(2, "1"), catalogNow)
	rev := s.revision()
	sub := mustSubmit(t, s, webSrc(2, "1"), catalogNow.Add(time.Minute))
	if !sub.Unchanged || sub.Version != 1 || sub.Changes != nil || sub.Job == nil || sub.Job.Name != "web" {
		t.Errorf("got %+v, want version 1 unchanged", sub)
	}
	if got := s.revision(); got != rev {
		t.Errorf("store revision moved from %d to %d: something was written", rev, got)
	}
	if spec := mustReadSpec(t, s, "web"); !spec.UpdatedAt.Equal(catalogNow) {
		t.Errorf("spec updated at %v, want %v", spec.UpdatedAt, catalogNow)
	}
}

// TestSubmit_changedFile: a changed file is the next version, its changes
// reckoned against the version that ran; earlier versions are kept.
func TestSubmit_changedFile(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	v1, v2, v3 := webSrc(2, "1"), webSrc(3, "1"), webSrc(1, "2")
	mustSubmit(t, s, v1, catalogNow)
	if _, err := s.Put(t.Context(), ChangedKey, []byte("other")); err != nil {
		t.Fatal(err)
	}
	sub := mustSubmit(t, s, v2, catalogNow.Add(time.Minute))
	if sub.Version != 2 || sub.Unchanged {
		t.Fatalf("got %+v, want version 2", sub)
	}
	if want := []GroupChange{{Group: "g", Keep: 2, Start: 1}}; !reflect.DeepEqual(sub.Changes, want) {
		t.Errorf("changes %+v, want %+v", sub.Changes, want)
	}
	spec := mustReadSpec(t, s, "web")
	if spec.Version != 2 || !reflect.DeepEqual(spec.Versions, []int{1, 2}) || !spec.UpdatedAt.Equal(catalogNow.Add(time.Minute)) {
		t.Errorf("spec %+v, want version 2 of [1 2]", spec)
	}
	for v, src := range map[int][]byte{1: v1, 2: v2} {
		if got, ok := s.value(VersionKey("web", v)); !ok || got != string(src) {
			t.Errorf("version %d's file: %q, %v", v, got, ok)
		}
	}
	if v, _ := s.value(ChangedKey); v != "web" {
		t.Errorf("%s: %q, want web written again", ChangedKey, v)
	}

	// A changed command replaces what runs of version 2.
	sub = mustSubmit(t, s, v3, catalogNow.Add(2*time.Minute))
	if want := []GroupChange{{Group: "g", Replace: 1, Stop: 2}}; sub.Version != 3 || !reflect.DeepEqual(sub.Changes, want) {
		t.Errorf("got version %d, changes %+v; want version 3, changes %+v", sub.Version, sub.Changes, want)
	}
}

// TestPreview: Preview says what Submit would do and writes nothing.
func TestPreview(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	ctx := t.Context()

	pre, err := Preview(ctx, s, "web.hcl", webSrc(2, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if pre.Version != 1 || pre.Unchanged || pre.Job == nil || pre.Job.Name != "web" ||
		!reflect.DeepEqual(pre.Changes, []GroupChange{{Group: "g", Start: 2}}) {
		t.Errorf("new job: got %+v, want version 1, 2 started", pre)
	}
	if rev, keys := s.revision(), s.keys(); rev != 0 || len(keys) != 0 {
		t.Errorf("preview of a new job wrote: revision %d, keys %q", rev, keys)
	}

	mustSubmit(t, s, webSrc(2, "1"), catalogNow)
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"count up", webSrc(4, "1")},
		{"args changed", webSrc(1, "9")},
	} {
		rev := s.revision()
		pre, err := Preview(ctx, s, "web.hcl", tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := s.revision(); got != rev {
			t.Errorf("%s: preview moved the store's revision from %d to %d", tc.name, rev, got)
		}
		sub := mustSubmit(t, s, tc.src, catalogNow)
		if pre.Version != sub.Version || pre.Unchanged || !reflect.DeepEqual(pre.Changes, sub.Changes) {
			t.Errorf("%s: preview %d %+v, submit %d %+v", tc.name, pre.Version, pre.Changes, sub.Version, sub.Changes)
		}
	}

	rev := s.revision()
	pre, err = Preview(ctx, s, "web.hcl", webSrc(1, "9"))
	if err != nil {
		t.Fatal(err)
	}
	if !pre.Unchanged || pre.Version != 3 || pre.Changes != nil {
		t.Errorf("the running file: got %+v, want version 3 unchanged", pre)
	}
	if got := s.revision(); got != rev {
		t.Errorf("preview moved the store's revision from %d to %d", rev, got)
	}
}

// TestStop_thenSubmitSameFile: Stop marks the job stopped and tells the
// runner; the same file submitted after it is a new version that starts
// everything.
func TestStop_thenSubmitSameFile(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	ctx := t.Context()
	src := webSrc(2, "1")
	mustSubmit(t, s, src, catalogNow)
	if _, err := s.Put(ctx, ChangedKey, []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := Stop(ctx, s, "web", catalogNow.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	spec := mustReadSpec(t, s, "web")
	if !spec.Stopped || spec.Version != 1 || !reflect.DeepEqual(spec.Versions, []int{1}) || !spec.UpdatedAt.Equal(catalogNow.Add(time.Minute)) {
		t.Errorf("spec after stop %+v, want version 1 stopped", spec)
	}
	if v, _ := s.value(ChangedKey); v != "web" {
		t.Errorf("%s after stop: %q, want web", ChangedKey, v)
	}

	pre, err := Preview(ctx, s, "web.hcl", src)
	if err != nil {
		t.Fatal(err)
	}
	sub := mustSubmit(t, s, src, catalogNow.Add(2*time.Minute))
	want := []GroupChange{{Group: "g", Start: 2}}
	if sub.Unchanged || sub.Version != 2 || !reflect.DeepEqual(sub.Changes, want) {
		t.Errorf("submit after stop: got %+v, want version 2, changes %+v", sub, want)
	}
	if pre.Unchanged || pre.Version != 2 || !reflect.DeepEqual(pre.Changes, want) {
		t.Errorf("preview after stop: got %+v, want version 2, changes %+v", pre, want)
	}
	spec = mustReadSpec(t, s, "web")
	if spec.Stopped || spec.Version != 2 || !reflect.DeepEqual(spec.Versions, []int{1, 2}) {
		t.Errorf("spec after submit %+v, want version 2 of [1 2], running", spec)
	}
}

// TestStop_unknownJob: there is no job to stop, and nothing is written.
func TestStop_unknownJob(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	mustSubmit(t, s, webSrc(1, "1"), catalogNow)
	rev := s.revision()
	err := Stop(t.Context(), s, "db", catalogNow)
	if !errors.Is(err, protocol.ErrInvalidArgument) {
		t.Errorf("got %v, want it to wrap %v", err, protocol.ErrInvalidArgument)
	}
	if got := s.revision(); got != rev {
		t.Errorf("store revision moved from %d to %d", rev, got)
	}
	if _, ok := s.value(SpecKey("db")); ok {
		t.Errorf("a spec of db was written")
	}
}
