package jobs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// memStore is a Store in memory with the masters' revision semantics:
// every write takes the next revision of one counter, Create fails on a
// key that exists, Update and a Delete at a revision fail unless the entry
// is at that revision.
type memStore struct {
	mu      sync.Mutex
	rev     uint64
	entries map[string]protocol.StoreItem
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{entries: map[string]protocol.StoreItem{}} }

func (s *memStore) Get(_ context.Context, key string) (protocol.StoreItem, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.entries[key]
	it.Value = slices.Clone(it.Value)
	return it, ok, nil
}

func (s *memStore) Put(_ context.Context, key string, value []byte) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(key, value), nil
}

func (s *memStore) Create(_ context.Context, key string, value []byte) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.entries[key]; ok {
		return 0, fmt.Errorf("%w: key %q exists, at revision %d", protocol.ErrConflict, key, old.Revision)
	}
	return s.write(key, value), nil
}

func (s *memStore) Update(_ context.Context, key string, value []byte, rev uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev == 0 {
		return 0, fmt.Errorf("%w: update at revision 0", protocol.ErrInvalidArgument)
	}
	if old, ok := s.entries[key]; !ok || old.Revision != rev {
		return 0, fmt.Errorf("%w: key %q is not at revision %d", protocol.ErrConflict, key, rev)
	}
	return s.write(key, value), nil
}

func (s *memStore) Delete(_ context.Context, key string, rev uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.entries[key]
	if rev != 0 && (!ok || old.Revision != rev) {
		return false, fmt.Errorf("%w: key %q is not at revision %d", protocol.ErrConflict, key, rev)
	}
	if !ok {
		return false, nil
	}
	delete(s.entries, key)
	s.rev++
	return true, nil
}

// write sets key's entry at the next revision; s.mu is held.
func (s *memStore) write(key string, value []byte) uint64 {
	s.rev++
	s.entries[key] = protocol.StoreItem{Key: key, Value: slices.Clone(value), Revision: s.rev}
	return s.rev
}

// revision is the store's revision counter: it moves with every write.
func (s *memStore) revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// value is key's value, and whether the key has an entry.
func (s *memStore) value(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.entries[key]
	return string(it.Value), ok
}

// keys is every key with an entry, in order.
func (s *memStore) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.entries {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// racingStore is a memStore where another writer gets in just before the
// first spec write of the op named ("create" or "update"): race runs on
// the memStore itself, then the write goes on.
type racingStore struct {
	*memStore
	on      string
	once    sync.Once
	race    func(*memStore)
	mu      sync.Mutex
	creates int
	updates int
}

func (s *racingStore) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	if _, spec := NameOfSpecKey(key); !spec {
		return s.memStore.Create(ctx, key, value)
	}
	s.mu.Lock()
	s.creates++
	s.mu.Unlock()
	if s.on == "create" {
		s.once.Do(func() { s.race(s.memStore) })
	}
	return s.memStore.Create(ctx, key, value)
}

func (s *racingStore) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if _, spec := NameOfSpecKey(key); !spec {
		return s.memStore.Update(ctx, key, value, rev)
	}
	s.mu.Lock()
	s.updates++
	s.mu.Unlock()
	if s.on == "update" {
		s.once.Do(func() { s.race(s.memStore) })
	}
	return s.memStore.Update(ctx, key, value, rev)
}

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

// raceSubmission races a submission of other against the submission the
// test makes, on the spec write named by on; it returns the store and
// the other submission's result once it ran.
func raceSubmission(t *testing.T, on string, first, other []byte) (*racingStore, *Submitted) {
	t.Helper()
	s := &racingStore{memStore: newMemStore(), on: on}
	if first != nil {
		mustSubmit(t, s.memStore, first, catalogNow)
	}
	var theirs Submitted
	s.race = func(m *memStore) {
		sub, err := Submit(t.Context(), m, "other.hcl", other, catalogNow)
		if err != nil {
			t.Errorf("the other submission: %v", err)
		}
		theirs = sub
	}
	return s, &theirs
}

// TestSubmit_conflictRetries: when another submission writes the spec
// between Submit's read and write, Submit reads it again and makes the
// next version after the other's; both stay in the spec record.
func TestSubmit_conflictRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		on    string
		first []byte // the job's version before both (nil: none)
	}{
		{"update", webSrc(1, "1")},
		{"create", nil},
	} {
		t.Run(tc.on, func(t *testing.T) {
			t.Parallel()
			ours, other := webSrc(2, "1"), webSrc(3, "1")
			s, theirs := raceSubmission(t, tc.on, tc.first, other)
			sub := mustSubmit(t, s, ours, catalogNow)
			if theirs.Version == 0 {
				t.Fatal("the other submission did not run")
			}
			if sub.Version == theirs.Version || sub.Unchanged {
				t.Errorf("both submissions made version %d", sub.Version)
			}
			spec := mustReadSpec(t, s, "web")
			if spec.Version != sub.Version || !slices.Contains(spec.Versions, sub.Version) || !slices.Contains(spec.Versions, theirs.Version) {
				t.Errorf("spec version %d of %v; want ours (%d) running, theirs (%d) kept", spec.Version, spec.Versions, sub.Version, theirs.Version)
			}
			if got, ok := s.value(VersionKey("web", sub.Version)); !ok || got != string(ours) {
				t.Errorf("our version %d's file: %q, %v", sub.Version, got, ok)
			}
			s.mu.Lock()
			writes := s.updates
			if tc.on == "create" {
				writes = s.creates + s.updates
			}
			s.mu.Unlock()
			if writes != 2 {
				t.Errorf("%d spec writes by our submission, want 2 (one lost to the race, one after)", writes)
			}
		})
	}
}

// TestSubmit_conflictKeepsTheOtherVersion: a submission that lost the
// race for the spec leaves the winner's version as the winner wrote it:
// its file is still in the store, and the loser's changes are reckoned
// against it.
func TestSubmit_conflictKeepsTheOtherVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		on    string
		first []byte
	}{
		{"update", webSrc(1, "1")},
		{"create", nil},
	} {
		t.Run(tc.on, func(t *testing.T) {
			t.Parallel()
			ours, other := webSrc(2, "1"), webSrc(3, "1")
			s, theirs := raceSubmission(t, tc.on, tc.first, other)
			sub := mustSubmit(t, s, ours, catalogNow)
			if theirs.Version == 0 {
				t.Fatal("the other submission did not run")
			}
			if got, ok := s.value(VersionKey("web", theirs.Version)); !ok || got != string(other) {
				t.Errorf("the other submission's version %d: file %q, in the store %v; want its file", theirs.Version, got, ok)
			}
			if want := []GroupChange{{Group: "g", Keep: 2, Stop: 1}}; !reflect.DeepEqual(sub.Changes, want) {
				t.Errorf("our changes %+v, want %+v (against the other's version, which ran before ours)", sub.Changes, want)
			}
		})
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

// TestSubmit_passesOverAClaimedNumber: a version number whose key exists
// but that no spec lists (a submission that claimed it and stopped before
// writing the spec) is passed over, its key left as it is.
func TestSubmit_passesOverAClaimedNumber(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	mustSubmit(t, s, webSrc(1, "1"), catalogNow)
	orphan := []byte("claimed by a submission that stopped")
	if _, err := s.Create(t.Context(), VersionKey("web", 2), orphan); err != nil {
		t.Fatal(err)
	}
	sub := mustSubmit(t, s, webSrc(2, "1"), catalogNow)
	if sub.Version != 3 {
		t.Errorf("version %d, want 3 (2 is claimed)", sub.Version)
	}
	if got, _ := s.value(VersionKey("web", 2)); got != string(orphan) {
		t.Errorf("the claimed key now holds %q", got)
	}
	if spec := mustReadSpec(t, s, "web"); !slices.Equal(spec.Versions, []int{1, 3}) {
		t.Errorf("versions %v, want [1 3]", spec.Versions)
	}
}
