package files

import (
	"mime"
	"net/http"
)

// serveDownload answers a file's raw bytes through http.ServeContent, which
// handles Range, If-Range and conditional requests and HEAD. The content
// type is fixed so that nothing in a sandbox is ever rendered as a page.
// A malformed or unsatisfiable range gets ServeContent's own plain-text
// error (416).
func (h *handler) serveDownload(w http.ResponseWriter, r *http.Request) *apiError {
	name, e := sandboxPath(r.URL.Query().Get("path"))
	if e != nil {
		return e
	}
	f, fi, e := h.openFile(name)
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
