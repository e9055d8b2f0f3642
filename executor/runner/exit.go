package runner

import (
	"io"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Exit is how a task ended.
type Exit struct {
	// Code is the exit status when the process exited.
	Code *int `json:"code,omitempty"`
	// Signal names the signal that killed the process, e.g. "SIGKILL".
	Signal string `json:"signal,omitempty"`
	// Reason is "" when the process ended on its own, with any status;
	// otherwise a protocol.Reason*: memory_limit, killed_by_framework (after
	// Kill), command_failed (it never started), executor_terminated (its
	// shim died without recording an exit).
	Reason string `json:"reason,omitempty"`
	// Message is human detail: the tail of stderr for a failed process,
	// what exceeded a limit, why the task did not start.
	Message string `json:"message,omitempty"`
	// EndedAt is when the end was observed.
	EndedAt time.Time `json:"ended_at"`
	// MemPeak is the most resident memory, in bytes, the task's
	// processes were seen to hold, under every isolation
	// (memWatch.memPeak); 0 when not known.
	MemPeak int64 `json:"mem_peak,omitempty"`
}

// MemPeakMiB is MemPeak in MiB, rounded up.
func (e Exit) MemPeakMiB() int64 { return mibCeil(e.MemPeak) }

// mibCeil converts bytes to MiB rounding up, so that a usage just over a
// limit does not read as equal to it.
func mibCeil(bytes int64) int64 { return (bytes + 1<<20 - 1) >> 20 }

// logCode is Code for a log line: the status, or -1 when the process did
// not exit on its own.
func (e Exit) logCode() int {
	if e.Code == nil {
		return -1
	}
	return *e.Code
}

// tailSize is how much of stderr an Exit's Message carries.
const tailSize = 1024

// tail returns the last n bytes of the file at path (not followed if it
// is a symlink), trimmed as tailOf does; "" when unreadable.
func tail(path string, n int64) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	return tailOf(f, n)
}

// tailOf returns the last n bytes of the regular file f, trimmed of
// surrounding white space and of a rune cut at the start; "" when
// unreadable.
func tailOf(f *os.File, n int64) string {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	off := max(fi.Size()-n, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return ""
	}
	if off > 0 {
		for len(buf) > 0 && !utf8.RuneStart(buf[0]) {
			buf = buf[1:]
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(buf), "\uFFFD"))
}
