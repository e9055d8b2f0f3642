package files

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Entry is one item of a directory listing. A symbolic link is listed as
// itself (Mode starts with "L"), not as what it points to.
type Entry struct {
	Name  string    `json:"name"`
	Size  int64     `json:"size"`
	Mode  string    `json:"mode"` // as fs.FileMode.String, e.g. "-rw-r--r--"
	MTime time.Time `json:"mtime"`
	Dir   bool      `json:"dir"`
}

// serveList answers the entries of a directory, sorted by name.
func (h *handler) serveList(w http.ResponseWriter, r *http.Request) *apiError {
	name, e := sandboxPath(r.URL.Query().Get("path"))
	if e != nil {
		return e
	}
	root, rel, e := h.openRoot(tokenFramework(r), name)
	if e != nil {
		return e
	}
	defer root.Close()
	dir, fi, e := openIn(root, rel)
	if e != nil {
		return e
	}
	defer dir.Close()
	if !fi.IsDir() {
		return badRequest("%s is not a directory", filepath.ToSlash(name))
	}
	des, err := dir.ReadDir(-1)
	if err != nil {
		return internalError("read directory", err)
	}
	entries := make([]Entry, 0, len(des))
	for _, de := range des {
		// Lstat through the root, not DirEntry.Info, which stats by path
		// outside the root's confinement.
		info, err := root.Lstat(filepath.Join(rel, de.Name()))
		if err != nil {
			continue // removed since the directory was read
		}
		entries = append(entries, Entry{
			Name:  de.Name(),
			Size:  info.Size(),
			Mode:  info.Mode().String(),
			MTime: info.ModTime().UTC(),
			Dir:   info.IsDir(),
		})
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	writeJSON(w, http.StatusOK, entries)
	return nil
}
