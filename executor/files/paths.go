package files

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// sandboxPath turns a request's path parameter into a clean name relative
// to the root. Absolute paths and paths whose ".." components climb above
// the root are refused here; symbolic links are left to os.Root.
func sandboxPath(raw string) (string, *apiError) {
	switch {
	case raw == "":
		return "", badRequest("missing path parameter")
	case strings.ContainsRune(raw, 0):
		return "", badRequest("path contains a NUL byte")
	case strings.HasPrefix(raw, "/") || filepath.IsAbs(raw) || filepath.VolumeName(raw) != "":
		return "", pathEscape("absolute paths are refused; paths are relative to the sandbox root")
	}
	name := filepath.Clean(filepath.FromSlash(raw))
	if !filepath.IsLocal(name) {
		return "", pathEscape("path escapes the sandbox root")
	}
	return name, nil
}

// openRoot opens, for one request, the directory that confines name, and
// returns name relative to it. That is the root for the agent's token, and
// for a framework token the sandbox name lies in (its first element): a
// task may make symbolic links in its sandbox, and one leading into
// another framework's sandbox must not be followed for its framework. The
// sandbox is opened through the root, so it cannot lead out either.
// Opening per request keeps no descriptor between requests and follows the
// root if it is recreated.
func (h *handler) openRoot(framework, name string) (*os.Root, string, *apiError) {
	root, err := os.OpenRoot(h.root)
	if err != nil {
		return nil, "", internalError("open sandbox root", err)
	}
	if framework == "" {
		return root, name, nil
	}
	defer root.Close()
	first, rest, _ := strings.Cut(filepath.ToSlash(name), "/")
	sandbox, err := root.OpenRoot(first)
	if err != nil {
		return nil, "", openError(err)
	}
	if rest == "" {
		rest = "."
	}
	return sandbox, filepath.FromSlash(rest), nil
}

// openIn opens name under root for reading. O_NONBLOCK keeps a FIFO in a
// sandbox from blocking the open; callers refuse anything but regular files
// and directories before reading.
func openIn(root *os.Root, name string) (*os.File, fs.FileInfo, *apiError) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, openError(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, internalError("stat", err)
	}
	return f, fi, nil
}

// openError classifies an error of os.Root. Operating-system errors keep
// their meaning; os.Root's own refusals (a ".." or absolute symbolic link
// leading out of the root) are the errors that carry no errno.
func openError(err error) *apiError {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return &apiError{status: http.StatusNotFound, code: CodeNotFound, msg: "no such file or directory", cause: err}
	case errors.Is(err, fs.ErrPermission):
		return &apiError{status: http.StatusForbidden, code: CodeForbidden, msg: "permission denied", cause: err}
	case errors.Is(err, syscall.ELOOP):
		return &apiError{status: http.StatusBadRequest, code: CodeBadRequest, msg: "too many levels of symbolic links", cause: err}
	case errors.As(err, &errno), errors.Is(err, fs.ErrInvalid), errors.Is(err, fs.ErrClosed):
		return internalError("open", err)
	default:
		e := pathEscape("path escapes the sandbox root through a symbolic link")
		e.cause = err
		return e
	}
}

// openFile opens the regular file name for one request with a token of
// framework ("" for the agent's token); the caller closes it.
func (h *handler) openFile(framework, name string) (*os.File, fs.FileInfo, *apiError) {
	root, rel, e := h.openRoot(framework, name)
	if e != nil {
		return nil, nil, e
	}
	defer root.Close()
	f, fi, e := openIn(root, rel)
	if e != nil {
		return nil, nil, e
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, nil, badRequest("%s is a directory", filepath.ToSlash(name))
		}
		return nil, nil, badRequest("%s is not a regular file", filepath.ToSlash(name))
	}
	return f, fi, nil
}
