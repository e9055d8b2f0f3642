package executor

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// The task journal, WorkDir/tasks.journal, holds the task records. It is a
// text file: a header line, then one entry per line,
//
//	<crc> <json>\n
//
// where json is a journalPayload (a whole task record, or the removal of
// one) and crc is the CRC-32C of json as 8 hex digits. A line is only
// ever appended, so a crash can leave at most the entries of the append
// it interrupted incomplete: a line cut short, or holding bytes that were
// never written. The CRC catches those, and such a line is ignored on
// replay; every other line is a record that was completely written.
// Replaying the file in order, the last entry of a record name wins and a
// removal drops the name. Within one append a name appears once, so an
// interrupted append leaves each task either its new record or an older,
// complete one. Nothing of such an append was sent (see
// Agent.commitCheckpoint), so nothing sent is lost. Lines, unlike length
// prefixes, keep the file readable with the usual tools, and a damaged
// line costs only itself: reading resumes at the next newline.
//
// The journal is rewritten with only the live records (compacted) when it
// is opened, which also drops a torn tail before anything is appended
// after it, and when it has grown well past them. A rewrite goes to a
// temporary file, fsync, rename, fsync of the directory, so a crash leaves
// the old file or the new one, each complete.
const (
	journalFile   = "tasks.journal"
	journalHeader = "allot task journal v1\n"
	// compactSlack and compactRatio: the journal is compacted once it holds
	// more than compactRatio entries per live record plus compactSlack.
	compactSlack = 1000
	compactRatio = 4
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// journalPayload is the JSON of one journal entry: Put, or Remove naming
// the record removed.
type journalPayload struct {
	Put    *taskRecord `json:"put,omitempty"`
	Remove string      `json:"remove,omitempty"`
}

// journalEntry is one encoded entry, ready to append.
type journalEntry struct {
	name   string
	remove bool
	line   []byte // "<crc> <json>\n"
}

// putEntry encodes a task record as a journal entry.
func putEntry(rec *taskRecord) (journalEntry, error) {
	line, err := encodeEntry(journalPayload{Put: rec})
	return journalEntry{name: rec.Name, line: line}, err
}

// removeEntry encodes the removal of a task record.
func removeEntry(name string) journalEntry {
	line, err := encodeEntry(journalPayload{Remove: name})
	if err != nil {
		panic(err) // a string always encodes
	}
	return journalEntry{name: name, remove: true, line: line}
}

func encodeEntry(p journalPayload) ([]byte, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("%w: encode task record: %w", ErrCheckpoint, err)
	}
	line := make([]byte, 0, 9+len(data)+1)
	line = fmt.Appendf(line, "%08x ", crc32c(data))
	line = append(line, data...)
	return append(line, '\n'), nil
}

// decodeEntry decodes one line (without its newline); ok is false for a
// line that was not completely written.
func decodeEntry(line []byte) (p journalPayload, ok bool) {
	if len(line) < 10 || line[8] != ' ' {
		return p, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return p, false
	}
	data := line[9:]
	want := uint32(sum[0])<<24 | uint32(sum[1])<<16 | uint32(sum[2])<<8 | uint32(sum[3])
	if crc32c(data) != want {
		return p, false
	}
	if err := json.Unmarshal(data, &p); err != nil || (p.Put == nil) == (p.Remove == "") {
		return p, false
	}
	return p, true
}

// journal appends to the task journal of one work directory. It is not
// safe for concurrent use: the agent's flusher owns it while it runs.
type journal struct {
	path string
	log  hclog.Logger
	f    *os.File
	// live holds the encoded put entry of every record in the journal, by
	// name: what a compaction writes.
	live map[string][]byte
	// entries counts the entries in the file.
	entries int
	// broken is set when a write failed: the file's tail is unknown, so
	// the next append rewrites the whole journal instead.
	broken bool
}

// openJournal replays the journal in dir, folds in the per-task record
// files of earlier versions (tasks/<name>.json), compacts the result into
// a fresh journal and opens it for appending. It returns the live records,
// sorted by name.
func openJournal(dir string, log hclog.Logger) (*journal, []taskRecord, error) {
	j := &journal{path: filepath.Join(dir, journalFile), log: log, live: map[string][]byte{}}
	removeTemps(dir, journalFile)
	recs := map[string]taskRecord{}
	if err := j.replay(recs); err != nil {
		return nil, nil, err
	}
	legacy, err := loadLegacyTasks(filepath.Join(dir, tasksDir), log)
	if err != nil {
		return nil, nil, err
	}
	for _, rec := range legacy {
		if _, ok := recs[rec.Name]; !ok { // the journal is newer
			recs[rec.Name] = rec
		}
	}
	out := make([]taskRecord, 0, len(recs))
	for _, rec := range recs {
		e, err := putEntry(&rec)
		if err != nil {
			return nil, nil, err
		}
		j.live[rec.Name] = e.line
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b taskRecord) int { return strings.Compare(a.Name, b.Name) })
	if err := j.compact(); err != nil {
		return nil, nil, err
	}
	if len(legacy) > 0 {
		// Only once the journal holds them: a crash before leaves them to
		// be folded in again.
		if err := removeLegacyTasks(filepath.Join(dir, tasksDir), legacy); err != nil {
			j.close()
			return nil, nil, err
		}
		log.Info("task records moved into the journal", "tasks", len(legacy))
	}
	return j, out, nil
}

// replay reads the journal into recs. Lines that were not completely
// written are logged and skipped. A damaged line before the end, which a
// crash leaves only within the last append, or a record that does not
// check, is logged too, and the journal as found is kept aside
// (tasks.journal.corrupt) before the compaction replaces it.
func (j *journal) replay(recs map[string]taskRecord) error {
	data, err := os.ReadFile(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	rest, ok := bytes.CutPrefix(data, []byte(journalHeader))
	if !ok {
		return fmt.Errorf("%w: %s: not a task journal", ErrCheckpoint, journalFile)
	}
	off, damaged := len(journalHeader), false
	for len(rest) > 0 {
		line, next, complete := bytes.Cut(rest, []byte{'\n'})
		p, valid := decodeEntry(line)
		switch {
		case !valid && !complete:
			j.log.Warn("incomplete entry at the end of the task journal ignored", "offset", off, "bytes", len(line))
		case !valid:
			j.log.Error("damaged task journal entry ignored", "offset", off, "bytes", len(line))
			damaged = true
		case p.Remove != "":
			delete(recs, p.Remove)
		default:
			if err := p.Put.check(); err != nil {
				j.log.Error("invalid task record in the journal ignored", "name", p.Put.Name, "error", err)
				damaged = true
				break
			}
			recs[p.Put.Name] = *p.Put
		}
		off += len(line) + 1
		rest = next
	}
	if damaged {
		if err := writeFileAtomic(j.path+corruptExt, data); err != nil {
			j.log.Error("keep a copy of the damaged task journal", "error", err)
		} else {
			j.log.Warn("copy of the damaged task journal kept", "file", j.path+corruptExt)
		}
	}
	return nil
}

// append writes entries with one write and one fsync, and compacts the
// journal when it has grown too long. Within entries a name appears at
// most once. On an error the entries still count: the journal is
// rewritten whole on the next call.
func (j *journal) append(entries []journalEntry) error {
	var buf []byte
	for _, e := range entries {
		if e.remove {
			delete(j.live, e.name)
		} else {
			j.live[e.name] = e.line
		}
		buf = append(buf, e.line...)
	}
	if j.broken || j.entries+len(entries) > compactRatio*len(j.live)+compactSlack {
		return j.compact()
	}
	_, err := j.f.Write(buf)
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		j.broken = true
		return fmt.Errorf("%w: append to %s: %w", ErrCheckpoint, journalFile, err)
	}
	j.entries += len(entries)
	return nil
}

// compact rewrites the journal with only the live records and reopens it
// for appending.
func (j *journal) compact() error {
	names := make([]string, 0, len(j.live))
	for name := range j.live {
		names = append(names, name)
	}
	slices.Sort(names)
	buf := []byte(journalHeader)
	for _, name := range names {
		buf = append(buf, j.live[name]...)
	}
	if err := writeFileAtomic(j.path, buf); err != nil {
		j.broken = true
		return fmt.Errorf("%w: compact %s: %w", ErrCheckpoint, journalFile, err)
	}
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		j.broken = true
		return fmt.Errorf("%w: open %s: %w", ErrCheckpoint, journalFile, err)
	}
	j.close()
	j.f, j.entries, j.broken = f, len(names), false
	return nil
}

// close closes the journal's file; the journal needs nothing else.
func (j *journal) close() {
	if j.f != nil {
		_ = j.f.Close()
		j.f = nil
	}
}
