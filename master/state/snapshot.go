package state

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// Snapshot stream format, version 1 (all integers big-endian):
//
//	header   magic "ALLOTSNP" (8 bytes), format version (uint16)
//	records  type (1 byte), body length (uint32), msgpack body
//	trailer  CRC-32C (Castagnoli) of every byte before it (uint32)
//
// Records come in this order: every role, agent, framework and task
// (each sorted by key), the completed tasks (by framework, oldest first)
// and the completed frameworks (oldest first), the store's entries (by
// principal and key), then exactly one end record. Restore requires a task's framework, and a completed task's, to
// precede it. Record type numbers are never reused; a
// type with recIgnorable set may be skipped by a reader that does not know
// it, any other unknown type is corruption.
const (
	snapshotMagic   = "ALLOTSNP"
	snapshotVersion = 1

	recRole      byte = 1
	recAgent     byte = 2
	recFramework byte = 3
	recTask      byte = 4
	// Store entries are data a framework relies on: a reader that does
	// not know them must fail rather than drop them.
	recStoreEntry byte = 7
	recEnd        byte = 0x7f
	recIgnorable  byte = 0x80
	// The completed history is display only: a reader that does not know
	// it may skip it.
	recCompletedTask      = recIgnorable | 5
	recCompletedFramework = recIgnorable | 6

	// maxRecordSize bounds one record body.
	maxRecordSize = 64 << 20
)

// endRecord closes a snapshot with what lets Restore check it is whole.
type endRecord struct {
	Roles      int    `msgpack:"roles"`
	Agents     int    `msgpack:"agents"`
	Frameworks int    `msgpack:"frameworks"`
	Tasks      int    `msgpack:"tasks"`
	Index      uint64 `msgpack:"index"`
	Seq        uint64 `msgpack:"seq"`
	// Completed and CompletedFrameworks count the history records.
	Completed           int `msgpack:"completed,omitempty"`
	CompletedFrameworks int `msgpack:"completed_fws,omitempty"`
	StoreEntries        int `msgpack:"store,omitempty"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the View as a snapshot stream to w and returns the number
// of bytes written. Equal views give equal bytes. It implements
// io.WriterTo.
func (v *View) WriteTo(w io.Writer) (int64, error) {
	sw := &snapWriter{w: bufio.NewWriterSize(w, 64<<10), crc: crc32.New(castagnoli)}
	var hdr [len(snapshotMagic) + 2]byte
	copy(hdr[:], snapshotMagic)
	binary.BigEndian.PutUint16(hdr[len(snapshotMagic):], snapshotVersion)
	sw.write(hdr[:])
	for _, r := range v.Roles() {
		sw.record(recRole, r)
	}
	for _, a := range v.Agents() {
		sw.record(recAgent, a)
	}
	for _, f := range v.Frameworks() {
		sw.record(recFramework, f)
	}
	v.tasks.ascend("", "", func(_ string, t *Task) bool {
		sw.record(recTask, t)
		return sw.err == nil
	})
	v.writeCompleted(sw)
	v.store.ascend("", "", func(_ string, e *StoreEntry) bool {
		sw.record(recStoreEntry, e)
		return sw.err == nil
	})
	sw.record(recEnd, endRecord{
		StoreEntries: v.store.Len(),
		Roles:        v.roles.Len(), Agents: v.agents.Len(), Frameworks: v.frameworks.Len(),
		Tasks: v.tasks.Len(), Index: v.index, Seq: v.seq,
		Completed: v.completed.Len(), CompletedFrameworks: v.completedFWs.Len(),
	})
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], sw.crc.Sum32())
	sw.write(sum[:])
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	return sw.n, sw.err
}

// snapWriter writes a snapshot, keeping the first error, the byte count
// and the running checksum.
type snapWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	n   int64
	err error
}

func (sw *snapWriter) write(b []byte) {
	if sw.err != nil {
		return
	}
	sw.crc.Write(b)
	n, err := sw.w.Write(b)
	sw.n += int64(n)
	sw.err = err
}

func (sw *snapWriter) record(typ byte, v any) {
	if sw.err != nil {
		return
	}
	body, err := marshal(v)
	if err != nil {
		sw.err = fmt.Errorf("snapshot: encode record %d: %w", typ, err)
		return
	}
	if len(body) > maxRecordSize {
		sw.err = fmt.Errorf("snapshot: record %d is %d bytes, limit %d", typ, len(body), maxRecordSize)
		return
	}
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(body)))
	sw.write(hdr[:])
	sw.write(body)
}
