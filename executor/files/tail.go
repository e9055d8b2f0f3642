package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

const (
	// defaultTailLines and maxTailLines bound the lines parameter.
	defaultTailLines = 100
	maxTailLines     = 10_000
	// tailChunk is how much a tail reads at a time, backwards or forwards.
	tailChunk = 64 << 10
	// followPoll is how often a followed file is checked for growth.
	followPoll = 200 * time.Millisecond
)

// serveTail answers the last lines of a file as text, at most MaxRead bytes
// of them (a longer tail starts mid-line). With follow it then streams what
// is appended, until the client goes away or the request's context ends; a
// file truncated meanwhile is followed again from its start.
func (h *handler) serveTail(w http.ResponseWriter, r *http.Request) *apiError {
	q := r.URL.Query()
	name, e := sandboxPath(q.Get("path"))
	if e != nil {
		return e
	}
	lines, e := intParam(q, "lines", defaultTailLines)
	if e != nil {
		return e
	}
	if lines < 0 {
		return badRequest("lines %d is negative", lines)
	}
	lines = min(lines, maxTailLines)
	follow := false
	if s := q.Get("follow"); s != "" {
		var err error
		if follow, err = strconv.ParseBool(s); err != nil {
			return badRequest("follow %q is not a boolean", s)
		}
	}

	f, fi, e := h.openFile(tokenFramework(r), name)
	if e != nil {
		return e
	}
	defer f.Close()
	size := fi.Size()
	start, err := tailStart(f, size, int(lines), h.maxRead)
	if err != nil {
		return internalError("tail", err)
	}

	hdr := w.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, io.NewSectionReader(f, start, size-start)); err != nil {
		h.logger.Debug("tail write failed", "path", name, "error", err)
		return nil
	}
	if !follow {
		return nil
	}
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		h.logger.Debug("tail cannot stream", "path", name, "error", err)
		return nil
	}
	err = followFile(r.Context(), f, size, func(p []byte) error {
		if _, err := w.Write(p); err != nil {
			return err
		}
		return rc.Flush()
	})
	h.logger.Trace("tail follow ended", "path", name, "error", err)
	return nil
}

// tailStart returns where the last n lines of f's first size bytes begin,
// looking back at most limit bytes. A newline that ends the data ends the
// last line and does not start another.
func tailStart(f io.ReaderAt, size int64, n int, limit int64) (int64, error) {
	if n == 0 || size == 0 {
		return size, nil
	}
	floor := max(size-limit, 0)
	buf := make([]byte, tailChunk)
	seen := 0
	for pos := size; pos > floor; {
		chunk := min(int64(len(buf)), pos-floor)
		pos -= chunk
		b := buf[:chunk]
		if k, err := f.ReadAt(b, pos); k < len(b) {
			return 0, fmt.Errorf("read at %d: %w", pos, err)
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != '\n' || pos+int64(i) == size-1 {
				continue
			}
			if seen++; seen == n {
				return pos + int64(i) + 1, nil
			}
		}
	}
	return floor, nil
}

// followFile hands emit what is appended to f from offset on, checking
// every followPoll, until ctx ends or emit or a read fails. It returns why
// it stopped.
func followFile(ctx context.Context, f *os.File, offset int64, emit func([]byte) error) error {
	ticker := time.NewTicker(followPoll)
	defer ticker.Stop()
	buf := make([]byte, tailChunk)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if fi.Size() < offset {
			offset = 0 // truncated: follow the new content from its start
		}
		for offset < fi.Size() {
			k, err := f.ReadAt(buf[:min(int64(len(buf)), fi.Size()-offset)], offset)
			if k > 0 {
				if err := emit(buf[:k]); err != nil {
					return err
				}
				offset += int64(k)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
	}
}
