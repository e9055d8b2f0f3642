package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestView_WriteTo_roundTrip(t *testing.T) {
	t.Parallel()
	for seed := uint64(100); seed < 106; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			s := New()
			randomLog(t, seed, s, 400)
			v := s.Snapshot()
			var buf bytes.Buffer
			n, err := v.WriteTo(&buf)
			if err != nil || n != int64(buf.Len()) {
				t.Fatalf("WriteTo: got %d, %v, want %d bytes", n, err, buf.Len())
			}
			want := bytes.Clone(buf.Bytes())
			r, err := Restore(&buf)
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			rv := r.Snapshot()
			if rv.Index() != v.Index() || rv.Index() != 400 || rv.seq != v.seq {
				t.Errorf("got index %d seq %d, want %d %d", rv.Index(), rv.seq, v.Index(), v.seq)
			}
			if got := snapshotBytes(t, rv); !bytes.Equal(got, want) {
				t.Error("restored state writes different bytes")
			}
			for _, c := range []struct {
				name      string
				got, want any
			}{
				{"roles", rv.Roles(), v.Roles()},
				{"agents", rv.Agents(), v.Agents()},
				{"frameworks", rv.Frameworks(), v.Frameworks()},
				{"tasks", rv.Tasks(), v.Tasks()},
				{"completed frameworks", rv.CompletedFrameworks(), v.CompletedFrameworks()},
			} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s differ after restore", c.name)
				}
			}
			for _, f := range v.Frameworks() {
				if !reflect.DeepEqual(rv.CompletedTasks(f.ID), v.CompletedTasks(f.ID)) {
					t.Errorf("completed tasks of framework %s differ after restore", f.ID)
				}
			}
			for _, a := range v.Agents() {
				if !reflect.DeepEqual(keys(rv.TasksByAgent(a.ID)), keys(v.TasksByAgent(a.ID))) {
					t.Errorf("tasks of agent %s differ after restore", a.ID)
				}
			}
			// The restored state goes on exactly like the original,
			// generated UUIDs included.
			g1, g2 := newLogGen(seed+1000), newLogGen(seed+1000)
			for i := range 200 {
				t1, b1 := g1.next(s)
				t2, b2 := g2.next(r)
				c1, _ := Encode(t1, b1)
				c2, _ := Encode(t2, b2)
				r1, e1 := s.Apply(uint64(401+i), c1)
				r2, e2 := r.Apply(uint64(401+i), c2)
				if fmt.Sprint(e1) != fmt.Sprint(e2) || !reflect.DeepEqual(r1, r2) {
					t.Fatalf("command %d diverged: %v %v vs %v %v", i, r1, e1, r2, e2)
				}
			}
			if !bytes.Equal(snapshotBytes(t, s.Snapshot()), snapshotBytes(t, r.Snapshot())) {
				t.Error("states diverged after restore")
			}
		})
	}
}

func TestView_WriteTo_empty(t *testing.T) {
	t.Parallel()
	b := snapshotBytes(t, New().Snapshot())
	r, err := Restore(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Restore(empty): %v", err)
	}
	if v := r.Snapshot(); v.Index() != 0 || v.NumTasks() != 0 || len(v.Agents()) != 0 {
		t.Errorf("got non-empty state %+v", v)
	}
}

// A draining agent's deadline survives a snapshot and its restore.
func TestView_WriteTo_drainDeadline(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdSetAgentState, &SetAgentState{AgentID: "ag-1", State: AgentDraining, Time: t0 + 1, DrainDeadline: t0 + 600e9})
	r, err := Restore(bytes.NewReader(snapshotBytes(t, h.view())))
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	a, ok := r.Snapshot().Agent("ag-1")
	if !ok || a.State != AgentDraining || a.DrainDeadline != t0+600e9 {
		t.Fatalf("restored agent: got %+v, want draining with drain deadline %d", a, int64(t0+600e9))
	}
}

func TestView_WriteTo_writeError(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	boom := errors.New("disk full")
	if _, err := h.view().WriteTo(failWriter{boom}); !errors.Is(err, boom) {
		t.Errorf("got %v, want %v", err, boom)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// rebuild returns a stream with the given records after a valid header
// and before a correct trailer.
func rebuild(version uint16, recs ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString(snapshotMagic)
	binary.Write(&b, binary.BigEndian, version)
	for _, r := range recs {
		b.Write(r)
	}
	binary.Write(&b, binary.BigEndian, crc32.Checksum(b.Bytes(), castagnoli))
	return b.Bytes()
}

func rec(typ byte, v any) []byte {
	body, err := marshal(v)
	if err != nil {
		panic(err)
	}
	out := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(len(body)))
	return append(out, body...)
}

func TestRestore_errors(t *testing.T) {
	t.Parallel()
	h := fixture(t)
	h.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	good := snapshotBytes(t, h.view())
	fw := &Framework{ID: "fw-1", Weight: 1, Connected: true}
	task := &Task{FrameworkID: "fw-1", ID: "t1", AgentID: "ag-1", State: "STAGING", Kind: "fair"}
	end := func(fws, tasks int) []byte { return rec(recEnd, endRecord{Frameworks: fws, Tasks: tasks, Index: 7}) }
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40

	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrSnapshotTruncated},
		{"header only", good[:10], ErrSnapshotTruncated},
		{"wrong magic", append([]byte("NOTASNAP"), good[8:]...), ErrSnapshotCorrupt},
		{"unknown version", rebuild(2, end(0, 0)), ErrSnapshotVersion},
		{"no end record", rebuild(1), ErrSnapshotTruncated},
		{"flipped bit", flipped, ErrSnapshotCorrupt},
		{"trailing bytes", append(bytes.Clone(good), 0), ErrSnapshotCorrupt},
		{"bad checksum", append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0), ErrSnapshotCorrupt},
		{"unknown record type", rebuild(1, rec(9, fw), end(0, 0)), ErrSnapshotCorrupt},
		{"count mismatch", rebuild(1, rec(recFramework, fw), end(0, 0)), ErrSnapshotCorrupt},
		{"duplicate framework", rebuild(1, rec(recFramework, fw), rec(recFramework, fw), end(2, 0)), ErrSnapshotCorrupt},
		{"task before framework", rebuild(1, rec(recTask, task), rec(recFramework, fw), end(1, 1)), ErrSnapshotCorrupt},
		{"invalid id", rebuild(1, rec(recFramework, &Framework{ID: "a\x00b"}), end(1, 0)), ErrSnapshotCorrupt},
		{"body not a map", rebuild(1, []byte{recFramework, 0, 0, 0, 1, 0x01}, end(1, 0)), ErrSnapshotCorrupt},
		{"record too long", rebuild(1, []byte{recFramework, 0xff, 0xff, 0xff, 0xff}), ErrSnapshotCorrupt},
		{"record longer than stream", rebuild(1, []byte{recFramework, 0, 0x10, 0, 0}), ErrSnapshotTruncated},
	}
	for n := 1; n < len(good); n += 7 {
		cases = append(cases, struct {
			name string
			data []byte
			want error
		}{fmt.Sprint("truncated at ", n), good[:n], ErrSnapshotTruncated})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Restore(bytes.NewReader(tc.data))
			if !errors.Is(err, tc.want) || s != nil {
				t.Fatalf("got %v, %v, want %v", s, err, tc.want)
			}
		})
	}
}

func TestRestore_ignorableRecord(t *testing.T) {
	t.Parallel()
	fw := &Framework{ID: "fw-1", Weight: 1, Connected: true}
	data := rebuild(1, rec(recIgnorable|9, map[string]int{"future": 1}), rec(recFramework, fw),
		rec(recIgnorable|0x33, fw), rec(recEnd, endRecord{Frameworks: 1, Index: 9, Seq: 3}))
	s, err := Restore(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	v := s.Snapshot()
	if _, ok := v.Framework("fw-1"); !ok || v.Index() != 9 || v.seq != 3 {
		t.Errorf("got index %d seq %d, framework present %v, want 9 3 true", v.Index(), v.seq, ok)
	}
}

func TestRestore_readError(t *testing.T) {
	t.Parallel()
	boom := errors.New("network down")
	good := snapshotBytes(t, fixture(t).view())
	r := io.MultiReader(bytes.NewReader(good[:20]), failReader{boom})
	if _, err := Restore(r); !errors.Is(err, boom) || errors.Is(err, ErrSnapshotCorrupt) {
		t.Errorf("got %v, want %v and not corrupt", err, boom)
	}
}

type failReader struct{ err error }

func (r failReader) Read([]byte) (int, error) { return 0, r.err }

func TestState_RestoreFrom(t *testing.T) {
	t.Parallel()
	src := fixture(t)
	src.must(CmdLaunchTasks, launch("fw-1", "ag-1", "t1"))
	dst := newHarness(t)
	old := dst.view()
	if err := dst.s.RestoreFrom(bytes.NewReader(snapshotBytes(t, src.view()))); err != nil {
		t.Fatalf("RestoreFrom: %v", err)
	}
	if !bytes.Equal(snapshotBytes(t, dst.view()), snapshotBytes(t, src.view())) {
		t.Error("got a different state after RestoreFrom")
	}
	if old.NumTasks() != 0 {
		t.Error("a View taken before RestoreFrom changed")
	}
	before := snapshotBytes(t, dst.view())
	if err := dst.s.RestoreFrom(bytes.NewReader([]byte("garbage"))); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("got %v, want ErrSnapshotCorrupt", err)
	}
	if !bytes.Equal(snapshotBytes(t, dst.view()), before) {
		t.Error("a failed RestoreFrom changed the state")
	}
}

// TestRestore_recordSizeLimit: a record of exactly the size limit is read
// (here it is longer than the stream, so truncated), one byte more is
// refused as corrupt before anything is read; the error names the record.
// It fails with the limit checked with >= for >, or with the record count
// in errors going the wrong way.
func TestRestore_recordSizeLimit(t *testing.T) {
	t.Parallel()
	header := func(n uint32) []byte {
		b := []byte{recFramework, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], n)
		return b
	}
	fw := &Framework{ID: "fw-1", Weight: 1, Connected: true}
	_, err := Restore(bytes.NewReader(rebuild(1, rec(recFramework, fw), header(maxRecordSize))))
	if !errors.Is(err, ErrSnapshotTruncated) {
		t.Errorf("a record of %d bytes on a short stream: %v, want ErrSnapshotTruncated", maxRecordSize, err)
	}
	_, err = Restore(bytes.NewReader(rebuild(1, rec(recFramework, fw), header(maxRecordSize+1))))
	if !errors.Is(err, ErrSnapshotCorrupt) || !strings.Contains(fmt.Sprint(err), "restore record 1:") {
		t.Errorf("a record of %d bytes: %v, want ErrSnapshotCorrupt naming record 1", maxRecordSize+1, err)
	}
}

// TestSnapWriter_recordSizeLimit: the writer takes a record of exactly
// the size limit and refuses one a byte longer. It fails with the limit
// checked with >= for >.
func TestSnapWriter_recordSizeLimit(t *testing.T) {
	t.Parallel()
	// {"x": s} encodes as fixmap, fixstr "x", str32 header and s: 8 bytes
	// besides s.
	for _, tc := range []struct {
		extra int
		fails bool
	}{{0, false}, {1, true}} {
		sw := &snapWriter{w: bufio.NewWriter(io.Discard), crc: crc32.New(castagnoli)}
		sw.record(recFramework, map[string]string{"x": strings.Repeat("a", maxRecordSize-8+tc.extra)})
		if (sw.err != nil) != tc.fails {
			t.Errorf("a record of %d bytes: %v", maxRecordSize+tc.extra, sw.err)
		}
		if !tc.fails && sw.n != 5+maxRecordSize {
			t.Errorf("wrote %d bytes, want %d", sw.n, 5+maxRecordSize)
		}
	}
}
