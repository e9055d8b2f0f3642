package jobs

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
)

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
