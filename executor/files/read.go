package files

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// ReadResponse is the body of a read, as Mesos's /files/read: Data holds
// the bytes of the file from Offset. Data is a JSON string, so bytes that
// are not valid UTF-8 arrive as U+FFFD; binary files should be downloaded.
// A query with offset -1 answers the file's size as Offset and no Data.
type ReadResponse struct {
	Offset int64  `json:"offset"`
	Data   string `json:"data"`
}

// serveRead answers up to length bytes (capped at MaxRead) of a file from
// offset. Reading at or past the end answers no data.
func (h *handler) serveRead(w http.ResponseWriter, r *http.Request) *apiError {
	q := r.URL.Query()
	name, e := sandboxPath(q.Get("path"))
	if e != nil {
		return e
	}
	offset, e := intParam(q, "offset", 0)
	if e != nil {
		return e
	}
	if offset < -1 {
		return badRequest("offset %d is negative", offset)
	}
	length, e := intParam(q, "length", h.maxRead)
	if e != nil {
		return e
	}
	if length < 0 {
		return badRequest("length %d is negative", length)
	}
	length = min(length, h.maxRead)

	f, fi, e := h.openFile(tokenFramework(r), name)
	if e != nil {
		return e
	}
	defer f.Close()
	size := fi.Size()
	if offset == -1 {
		writeJSON(w, http.StatusOK, ReadResponse{Offset: size})
		return nil
	}
	length = max(min(length, size-offset), 0)
	buf := make([]byte, length)
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) { // io.EOF: the file shrank since the stat
		return internalError("read", err)
	}
	writeJSON(w, http.StatusOK, ReadResponse{Offset: offset, Data: string(buf[:n])})
	return nil
}

// intParam parses the integer query parameter key, or returns def when it
// is absent.
func intParam(q url.Values, key string, def int64) (int64, *apiError) {
	s := q.Get(key)
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badRequest("%s %q is not an integer", key, s)
	}
	return v, nil
}
