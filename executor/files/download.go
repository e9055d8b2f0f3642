package files

import (
	"errors"
	"mime"
	"net/http"
)

// serveDownload answers a file's raw bytes through http.ServeContent, which
// handles Range, If-Range and conditional requests and HEAD. The content
// type is fixed so that nothing in a sandbox is ever rendered as a page.
// A malformed or unsatisfiable range gets ServeContent's own plain-text
// error (416).
//
// A download naming a coflow waits for its turn at the Shuffle before the
// file is even opened, so that waiting transfers hold no descriptor; a
// client that gives up while waiting gets nothing written.
func (h *handler) serveDownload(w http.ResponseWriter, r *http.Request) *apiError {
	name, e := sandboxPath(r.URL.Query().Get("path"))
	if e != nil {
		return e
	}
	t, e := h.shuffleTransfer(r, name, tokenFramework(r))
	if e != nil {
		return e
	}
	if t == nil {
		return h.sendFile(w, r, name)
	}
	flow, err := h.shuffle.Acquire(r.Context(), *t)
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		return nil
	case errors.Is(err, ErrShuffleStopped):
		return &apiError{status: http.StatusServiceUnavailable, code: CodeUnavailable, msg: "the shuffle server is stopping", cause: err}
	default:
		return internalError("wait for a shuffle slot", err)
	}
	cw := &countingWriter{ResponseWriter: w, ctx: r.Context(), flow: flow}
	ok := false
	// Deferred, so that even a panicking handler gives its slot back. A
	// refusal is written by the caller, after this: it carries none of
	// the file either way.
	defer func() { flow.Done(cw.n, ok) }()
	e = h.sendFile(cw, r, name)
	ok = e == nil && cw.complete()
	return e
}

// sendFile serves the regular file name.
func (h *handler) sendFile(w http.ResponseWriter, r *http.Request, name string) *apiError {
	f, fi, e := h.openFile(tokenFramework(r), name)
	if e != nil {
		return e
	}
	defer f.Close()
	hdr := w.Header()
	hdr.Set("Content-Type", "application/octet-stream")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "private, no-cache")
	if cd := mime.FormatMediaType("attachment", map[string]string{"filename": fi.Name()}); cd != "" {
		hdr.Set("Content-Disposition", cd)
	}
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
	return nil
}
