package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// Restore reads a snapshot stream written by View.WriteTo into a new State.
// It never panics. Errors wrap ErrSnapshotVersion (a format version this
// build does not read), ErrSnapshotTruncated (the stream ends early),
// ErrSnapshotCorrupt (anything else malformed: magic, record framing or
// body, an unknown record type not flagged ignorable, invalid IDs or
// states, duplicates, a task before its framework, counts or checksum that
// do not match, bytes after the trailer), or are r's own read errors.
// Records are checked for structure and identity, not re-validated in
// full: their content was validated when the commands were applied.
func Restore(r io.Reader) (*State, error) {
	sr := &snapReader{r: bufio.NewReaderSize(r, 64<<10), crc: crc32.New(castagnoli)}
	var hdr [len(snapshotMagic) + 2]byte
	if err := sr.read(hdr[:]); err != nil {
		return nil, fmt.Errorf("restore header: %w", err)
	}
	if string(hdr[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("restore: bad magic %q: %w", hdr[:len(snapshotMagic)], ErrSnapshotCorrupt)
	}
	if ver := binary.BigEndian.Uint16(hdr[len(snapshotMagic):]); ver != snapshotVersion {
		return nil, fmt.Errorf("restore: format version %d, want %d: %w", ver, snapshotVersion, ErrSnapshotVersion)
	}
	var v View
	for n := 0; ; n++ {
		typ, body, err := sr.record()
		if err != nil {
			return nil, fmt.Errorf("restore record %d: %w", n, err)
		}
		done, err := v.restoreRecord(typ, body)
		if err != nil {
			return nil, fmt.Errorf("restore record %d (type %d): %w", n, typ, err)
		}
		if done {
			break
		}
	}
	want := sr.crc.Sum32()
	var sum [4]byte
	if err := sr.read(sum[:]); err != nil {
		return nil, fmt.Errorf("restore trailer: %w", err)
	}
	if got := binary.BigEndian.Uint32(sum[:]); got != want {
		return nil, fmt.Errorf("restore: checksum %08x, computed %08x: %w", got, want, ErrSnapshotCorrupt)
	}
	if _, err := sr.r.ReadByte(); err == nil {
		return nil, fmt.Errorf("restore: bytes after the trailer: %w", ErrSnapshotCorrupt)
	} else if err != io.EOF {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return &State{cur: v}, nil
}

// restoreRecord adds one record to v; done reports the end record.
func (v *View) restoreRecord(typ byte, body []byte) (done bool, err error) {
	switch typ &^ recIgnorable {
	case recRole:
		err = v.restoreRole(body)
	case recAgent:
		err = v.restoreAgent(body)
	case recFramework:
		err = v.restoreFramework(body)
	case recTask:
		err = v.restoreTask(body)
	case recCompletedTask &^ recIgnorable:
		err = v.restoreCompletedTask(body)
	case recCompletedFramework &^ recIgnorable:
		err = v.restoreCompletedFramework(body)
	case recStoreEntry:
		err = v.restoreStoreEntry(body)
	case recEnd:
		if err = v.restoreEnd(body); err != nil {
			return false, err
		}
		return true, nil
	default:
		if typ&recIgnorable == 0 {
			return false, corrupt("unknown record type %d", typ)
		}
	}
	return false, err
}

func (v *View) restoreRole(body []byte) error {
	var r Role
	if err := decodeRecord(body, &r); err != nil {
		return err
	}
	if err := (&SetRole{Path: r.Path, Weight: r.Weight, Quota: r.Quota, OfferConstraints: r.OfferConstraints}).validate(); err != nil {
		return corrupt("role: %v", err)
	}
	if _, dup := v.roles.get(r.Path); dup {
		return corrupt("duplicate role %q", r.Path)
	}
	v.roles = v.roles.set(r.Path, &r)
	return nil
}

func (v *View) restoreAgent(body []byte) error {
	var a Agent
	if err := decodeRecord(body, &a); err != nil {
		return err
	}
	if !protocol.ValidID(string(a.ID)) || !a.State.Valid() {
		return corrupt("agent %q in state %q", clip(string(a.ID)), clip(string(a.State)))
	}
	if _, dup := v.agents.get(string(a.ID)); dup {
		return corrupt("duplicate agent %s", a.ID)
	}
	v.agents = v.agents.set(string(a.ID), &a)
	return nil
}

func (v *View) restoreFramework(body []byte) error {
	var f Framework
	if err := decodeRecord(body, &f); err != nil {
		return err
	}
	if !protocol.ValidID(string(f.ID)) || !slices.IsSorted(f.Capabilities) {
		return corrupt("framework %q", clip(string(f.ID)))
	}
	if _, dup := v.frameworks.get(string(f.ID)); dup {
		return corrupt("duplicate framework %s", f.ID)
	}
	v.frameworks = v.frameworks.set(string(f.ID), &f)
	return nil
}

func (v *View) restoreTask(body []byte) error {
	var t Task
	if err := decodeRecord(body, &t); err != nil {
		return err
	}
	if !protocol.ValidID(string(t.FrameworkID)) || !protocol.ValidID(string(t.ID)) ||
		!protocol.ValidID(string(t.AgentID)) || !t.State.Valid() {
		return corrupt("task %q/%q on %q in state %q", clip(string(t.FrameworkID)),
			clip(string(t.ID)), clip(string(t.AgentID)), clip(string(t.State)))
	}
	if _, ok := v.frameworks.get(string(t.FrameworkID)); !ok {
		return corrupt("task %s/%s before its framework", t.FrameworkID, t.ID)
	}
	if _, dup := v.tasks.get(taskKey(t.FrameworkID, t.ID)); dup {
		return corrupt("duplicate task %s/%s", t.FrameworkID, t.ID)
	}
	v.putTask(&t)
	return nil
}

func (v *View) restoreStoreEntry(body []byte) error {
	var e StoreEntry
	if err := decodeRecord(body, &e); err != nil {
		return err
	}
	if err := (&StorePut{Principal: e.Principal, Key: e.Key, Value: e.Value}).validate(); err != nil || e.Revision == 0 {
		return corrupt("store entry %q: %v", clip(e.Key), err)
	}
	k := storeKey(e.Principal, e.Key)
	if last, _, ok := v.store.last("", ""); ok && last >= k {
		return corrupt("store entry %q out of order", clip(e.Key))
	}
	use := v.StoreUsage(e.Principal)
	v.store = v.store.set(k, &e)
	v.storeUse = v.storeUse.set(e.Principal, StoreUsage{Keys: use.Keys + 1, Bytes: use.Bytes + e.size()})
	return nil
}

// restoreEnd checks the end record's counts against what was read, and
// takes the index and sequence number it carries.
func (v *View) restoreEnd(body []byte) error {
	var e endRecord
	if err := decodeRecord(body, &e); err != nil {
		return err
	}
	if e.Roles != v.roles.Len() || e.Agents != v.agents.Len() ||
		e.Frameworks != v.frameworks.Len() || e.Tasks != v.tasks.Len() {
		return corrupt("end record counts %d/%d/%d/%d, read %d/%d/%d/%d",
			e.Roles, e.Agents, e.Frameworks, e.Tasks,
			v.roles.Len(), v.agents.Len(), v.frameworks.Len(), v.tasks.Len())
	}
	if err := v.checkCompletedCounts(e); err != nil {
		return err
	}
	if e.StoreEntries != v.store.Len() {
		return corrupt("end record counts %d store entries, read %d", e.StoreEntries, v.store.Len())
	}
	v.index, v.seq = e.Index, e.Seq
	return nil
}

func decodeRecord(body []byte, v any) error {
	if err := decodeBody(body, v); err != nil {
		return corrupt("%v", err)
	}
	return nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrSnapshotCorrupt)
}

// snapReader reads a snapshot stream, keeping the running checksum.
type snapReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	buf bytes.Buffer
}

// read fills b, counting it in the checksum.
func (sr *snapReader) read(b []byte) error {
	if _, err := io.ReadFull(sr.r, b); err != nil {
		return readErr(err)
	}
	sr.crc.Write(b)
	return nil
}

// record reads one record. The body is valid until the next call.
func (sr *snapReader) record() (byte, []byte, error) {
	var hdr [5]byte
	if err := sr.read(hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxRecordSize {
		return 0, nil, corrupt("record of %d bytes, limit %d", n, maxRecordSize)
	}
	// Copy rather than allocate n bytes up front, so that a forged length
	// on a short stream costs only what the stream holds.
	sr.buf.Reset()
	if _, err := io.CopyN(&sr.buf, sr.r, int64(n)); err != nil {
		return 0, nil, readErr(err)
	}
	body := sr.buf.Bytes()
	sr.crc.Write(body)
	return hdr[0], body, nil
}

// readErr maps an early end of the stream to ErrSnapshotTruncated.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrSnapshotTruncated
	}
	return err
}
