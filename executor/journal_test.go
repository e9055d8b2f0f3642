package executor

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/allot-project/allot/internal/testlog"
	"github.com/allot-project/allot/protocol"
)

// record is the record "fw_<id>" of task id of framework fw in state st,
// with n queued updates.
func record(id string, st protocol.TaskState, n int) taskRecord {
	rec := taskRecord{Name: "fw_" + id, FrameworkID: "fw", Info: protocol.TaskInfo{TaskID: protocol.TaskID(id)}, State: st}
	for i := range n {
		uuid := protocol.StatusUUID(fmt.Sprintf("st-%s-%d", id, i))
		u := protocol.StatusUpdate{UUID: uuid, Status: protocol.TaskStatus{TaskID: rec.Info.TaskID, FrameworkID: "fw", State: st, UUID: uuid}}
		rec.Latest = &u
		rec.Queue = append(rec.Queue, u)
	}
	return rec
}

func put(t *testing.T, rec taskRecord) journalEntry {
	t.Helper()
	e, err := putEntry(&rec)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func appendOK(t *testing.T, j *journal, entries ...journalEntry) {
	t.Helper()
	if err := j.append(entries); err != nil {
		t.Fatal(err)
	}
}

// openOK opens the journal of dir.
func openOK(t *testing.T, dir string) (*journal, []taskRecord) {
	t.Helper()
	j, recs, err := openJournal(dir, testlog.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.close)
	return j, recs
}

// checkRecords fails unless recs are, by name, in the states of want.
func checkRecords(t *testing.T, recs []taskRecord, want map[string]protocol.TaskState) {
	t.Helper()
	got := map[string]protocol.TaskState{}
	for _, r := range recs {
		got[r.Name] = r.State
	}
	if !maps.Equal(got, want) {
		t.Fatalf("records: got %v, want %v", got, want)
	}
	if !slices.IsSortedFunc(recs, func(a, b taskRecord) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("records not sorted by name")
	}
}

func TestJournal_RoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, recs := openOK(t, dir)
	if len(recs) != 0 {
		t.Fatalf("empty dir: got %+v", recs)
	}
	appendOK(t, j, put(t, record("a", "STARTING", 1)), put(t, record("b", "STARTING", 1)), put(t, record("c", "STARTING", 1)))
	appendOK(t, j, put(t, record("a", "RUNNING", 2)), removeEntry("fw_b"))
	appendOK(t, j, put(t, record("d", "FINISHED", 3)))
	j.close()

	_, recs = openOK(t, dir)
	checkRecords(t, recs, map[string]protocol.TaskState{"fw_a": "RUNNING", "fw_c": "STARTING", "fw_d": "FINISHED"})
	for _, r := range recs {
		if r.Name == "fw_d" && (len(r.Queue) != 3 || r.Queue[2].UUID != "st-d-2" || r.Latest.UUID != "st-d-2") {
			t.Fatalf("fw_d: got queue %+v latest %+v, want its 3 updates", r.Queue, r.Latest)
		}
	}
}

// TestJournal_TornTail damages the end of the journal as a crash during
// an append can: the damaged entry is ignored, the ones before it are
// kept, and appends after the next open are read back.
func TestJournal_TornTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(last []byte) []byte // the last entry as the crash left it
		want   protocol.TaskState       // fw_b's state after it
	}{
		{"cut short", func(last []byte) []byte { return last[:len(last)/2] }, "STARTING"},
		{"crc cut short", func(last []byte) []byte { return last[:5] }, "STARTING"},
		{"zeros", func(last []byte) []byte { return make([]byte, len(last)) }, "STARTING"},
		{"zeros in the middle", func(last []byte) []byte {
			out := bytes.Clone(last)
			clear(out[len(out)/3 : 2*len(out)/3])
			return out
		}, "STARTING"},
		// Every byte of the record made it: it is a complete record.
		{"only the newline missing", func(last []byte) []byte { return last[:len(last)-1] }, "RUNNING"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			j, _ := openOK(t, dir)
			appendOK(t, j, put(t, record("a", "STARTING", 1)), put(t, record("b", "STARTING", 1)))
			last := put(t, record("b", "RUNNING", 2))
			appendOK(t, j, last)
			j.close()
			path := filepath.Join(dir, journalFile)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(data, last.line) {
				t.Fatal("the last entry is not at the end of the journal")
			}
			data = append(data[:len(data)-len(last.line)], tc.damage(last.line)...)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}

			j, recs := openOK(t, dir)
			checkRecords(t, recs, map[string]protocol.TaskState{"fw_a": "STARTING", "fw_b": tc.want})
			appendOK(t, j, put(t, record("c", "RUNNING", 1)))
			j.close()
			_, recs = openOK(t, dir)
			checkRecords(t, recs, map[string]protocol.TaskState{"fw_a": "STARTING", "fw_b": tc.want, "fw_c": "RUNNING"})
		})
	}
}

// TestJournal_CrashMidAppend leaves the journal as a crash during a group
// commit can: the first entries of the batch written, the next one cut.
// Each task gets its latest complete record: the new one, or the one
// before.
func TestJournal_CrashMidAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := openOK(t, dir)
	appendOK(t, j, put(t, record("a", "STARTING", 1)), put(t, record("b", "STARTING", 1)), put(t, record("c", "STARTING", 1)))
	// No close, nor the compaction of a clean stop: the process is gone.
	batch := []journalEntry{put(t, record("a", "RUNNING", 2)), removeEntry("fw_b"), put(t, record("c", "RUNNING", 2))}
	var raw []byte
	for _, e := range batch {
		raw = append(raw, e.line...)
	}
	raw = raw[:len(raw)-len(batch[2].line)/2]
	if _, err := j.f.Write(raw); err != nil {
		t.Fatal(err)
	}

	_, recs := openOK(t, dir)
	checkRecords(t, recs, map[string]protocol.TaskState{"fw_a": "RUNNING", "fw_c": "STARTING"})
}

// TestJournal_DamagedEntry damages an entry before the end: it is
// ignored, the entries after it are kept, and so is a copy of the journal
// as found.
func TestJournal_DamagedEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := openOK(t, dir)
	appendOK(t, j, put(t, record("a", "STARTING", 1)))
	appendOK(t, j, put(t, record("a", "RUNNING", 1)), put(t, record("b", "STARTING", 1)))
	appendOK(t, j, put(t, record("c", "STARTING", 1)))
	j.close()
	path := filepath.Join(dir, journalFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"RUNNING"`))
	if i < 0 {
		t.Fatal("no RUNNING record in the journal")
	}
	data[i+1] = 'X' // RUNNING becomes XUNNING: the CRC no longer matches
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, recs := openOK(t, dir)
	checkRecords(t, recs, map[string]protocol.TaskState{"fw_a": "STARTING", "fw_b": "STARTING", "fw_c": "STARTING"})
	if kept, err := os.ReadFile(path + corruptExt); err != nil || !bytes.Equal(kept, data) {
		t.Fatalf("copy of the damaged journal: %v, want it as found", err)
	}
}

// TestJournal_Compaction keeps the journal short while records change and
// go, and loses none of the live ones.
func TestJournal_Compaction(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := openOK(t, dir)
	want := map[string]protocol.TaskState{}
	states := []protocol.TaskState{"STAGING", "STARTING", "RUNNING", "KILLING"}
	for b := range 500 { // appends of 10 entries, each of another record
		var batch []journalEntry
		for i := b * 10; i < (b+1)*10; i++ {
			id := fmt.Sprintf("t%d", i%40)
			if i%7 == 0 {
				batch = append(batch, removeEntry("fw_"+id))
				delete(want, "fw_"+id)
				continue
			}
			st := states[i%len(states)]
			batch = append(batch, put(t, record(id, st, i%3)))
			want["fw_"+id] = st
		}
		appendOK(t, j, batch...)
		if limit := compactRatio*len(j.live) + compactSlack; j.entries > limit {
			t.Fatalf("after %d appends: %d entries, over %d", b+1, j.entries, limit)
		}
	}
	if len(j.live) != len(want) {
		t.Fatalf("%d live records, want %d", len(j.live), len(want))
	}
	data, err := os.ReadFile(filepath.Join(dir, journalFile))
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(data, []byte{'\n'}) - 1; lines != j.entries || lines > compactRatio*len(want)+compactSlack {
		t.Fatalf("journal of %d entries (counted %d) for %d records", lines, j.entries, len(want))
	}
	_, recs := openOK(t, dir)
	checkRecords(t, recs, want)
	data, err = os.ReadFile(filepath.Join(dir, journalFile))
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(data, []byte{'\n'}) - 1; lines != len(want) {
		t.Fatalf("opened journal holds %d entries, want the %d live records", lines, len(want))
	}
}

// TestJournal_WriteFailure: after a failed write the journal is rewritten
// whole, with the records of the failed write too.
func TestJournal_WriteFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := openOK(t, dir)
	appendOK(t, j, put(t, record("a", "STARTING", 1)))
	j.f.Close() // the next write fails
	if err := j.append([]journalEntry{put(t, record("b", "STARTING", 1))}); err == nil {
		t.Fatal("append to a closed file succeeded")
	}
	appendOK(t, j, put(t, record("a", "RUNNING", 1)))
	j.close()
	_, recs := openOK(t, dir)
	checkRecords(t, recs, map[string]protocol.TaskState{"fw_a": "RUNNING", "fw_b": "STARTING"})
}

func TestJournal_NotAJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, journalFile), []byte("something else\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openJournal(dir, testlog.New(t)); err == nil {
		t.Fatal("opened a file that is not a journal")
	}
}

func TestJournal_DecodeEntry(t *testing.T) {
	t.Parallel()
	good := removeEntry("fw_a").line
	good = good[:len(good)-1]
	tests := []struct {
		name string
		line []byte
		ok   bool
	}{
		{"good", good, true},
		{"empty", nil, false},
		{"crc only", good[:9], false},
		{"bad crc", append([]byte("00000000"), good[8:]...), false},
		{"crc not hex", append([]byte("zzzzzzzz"), good[8:]...), false},
		{"no separator", append(bytes.Clone(good[:8]), good[9:]...), false},
		{"both put and remove", line(t, `{"put":{"name":"x"},"remove":"x"}`), false},
		{"neither", line(t, `{}`), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, ok := decodeEntry(tc.line); ok != tc.ok {
				t.Fatalf("got %v, want %v", ok, tc.ok)
			}
		})
	}
}

// line frames a raw payload as a journal line, without its newline.
func line(t *testing.T, payload string) []byte {
	t.Helper()
	return []byte(fmt.Sprintf("%08x %s", crc32c([]byte(payload)), payload))
}
