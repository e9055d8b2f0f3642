package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// CatchUp is a follower started again with an empty data directory, as a
// master whose disk was lost and replaced: the leader sends it a snapshot
// and the log since.
type CatchUp struct {
	Master int
	// Index is the leader's commit index when the follower started; Took
	// is from its start until it had applied that index.
	Index uint64
	Took  time.Duration
	// SnapshotBytes is the snapshot it installed, from its log; 0 if it
	// installed none (the leader sent it the whole log).
	SnapshotBytes int64
}

// catchUp kills a follower, empties its data directory and starts it
// again without --bootstrap (it is still in the Raft configuration), and
// times until it has applied what the leader had committed then.
func (r *run) catchUp(ctx context.Context) error {
	li, err := waitLeader(ctx, r.ms)
	if err != nil {
		return err
	}
	fi := (li + 1) % len(r.ms)
	f := r.ms[fi]
	f.kill()
	if err := os.RemoveAll(f.data); err != nil {
		return fmt.Errorf("catch-up: %w", err)
	}
	f.args = slices.DeleteFunc(f.args, func(a string) bool { return a == "--bootstrap" })
	lm, err := readMetrics(ctx, r.ms[li])
	if err != nil {
		return fmt.Errorf("catch-up: %w", err)
	}
	target := uint64(lm.value("allot_raft_commit_index"))
	var logFrom int64
	if st, err := os.Stat(f.log); err == nil {
		logFrom = st.Size()
	}
	started := time.Now()
	if err := f.start(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		if s, err := readMetrics(wctx, f); err == nil && uint64(s.value("allot_raft_applied_index")) >= target {
			break
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("catch-up: %s did not apply index %d: %w", f.name, target, wctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	res := CatchUp{Master: fi, Index: target, Took: time.Since(started)}
	res.SnapshotBytes, _ = installedSnapshot(f.log, logFrom)
	r.report.CatchUp = &res
	r.progress("catch-up: %s applied index %d %s after it started with an empty disk (snapshot of %d bytes)",
		f.name, target, res.Took.Round(time.Millisecond), res.SnapshotBytes)
	return nil
}

// snapshotCopied is the line hashicorp/raft logs when a follower has
// received a snapshot from the leader.
var snapshotCopied = regexp.MustCompile(`copied to local snapshot:? .*bytes=(\d+)`)

// installedSnapshot reads a master's log from offset for the size of the
// snapshot it received.
func installedSnapshot(path string, offset int64) (int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	if _, err := fh.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := snapshotCopied.FindStringSubmatch(sc.Text()); m != nil {
			return strconv.ParseInt(m[1], 10, 64)
		}
	}
	return 0, sc.Err()
}
