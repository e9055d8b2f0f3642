package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/allot-project/allot/protocol"
)

// fetch saves one URI into the sandbox: downloaded into a temporary file in
// the staging directory, checked against its sha256, then renamed into
// place or, for an archive with Extract, unpacked next to where it would
// have been saved. A local file is read as the task's user, cred. It
// reports whether it created symlinks.
func (r *Runner) fetch(ctx context.Context, sandbox, staging string, u protocol.URI, cred *Credential) (bool, error) {
	name := u.OutputFile
	if name == "" {
		var err error
		if name, err = baseName(u.Value); err != nil {
			return false, err
		}
	}
	if err := checkRelPath(name); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(staging, "fetch-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	err = r.download(ctx, u.Value, cred, io.MultiWriter(tmp, h))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); u.Sha256 != "" && !strings.EqualFold(got, u.Sha256) {
		return false, fmt.Errorf("%w: sha256 mismatch: expected %s, got %s", ErrFetch, strings.ToLower(u.Sha256), got)
	}
	if kind := archiveKind(name); u.Extract && kind != "" {
		return extract(sandbox, path.Dir(path.Clean(name)), tmp.Name(), kind)
	}
	target, err := targetIn(sandbox, name)
	if err != nil {
		return false, err
	}
	mode := os.FileMode(0o644)
	if u.Executable {
		mode = 0o755
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return false, fmt.Errorf("save %s: %w", name, err)
	}
	return false, nil
}

// download copies the content of the URI raw to w.
func (r *Runner) download(ctx context.Context, raw string, cred *Credential, w io.Writer) error {
	src, err := r.open(ctx, raw, cred)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := copyCtx(ctx, w, src); err != nil {
		return fmt.Errorf("%w: %w", ErrFetch, err)
	}
	return nil
}

// open opens an http, https or file URI, or an absolute local path. A
// local file is opened with the file system identity of cred: the agent
// may read files the task's user may not, and a URI must not hand them to
// the task.
func (r *Runner) open(ctx context.Context, raw string, cred *Credential) (io.ReadCloser, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	local := ""
	switch u.Scheme {
	case "http", "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFetch, err)
		}
		resp, err := r.cfg.HTTPClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFetch, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: HTTP status %s", ErrFetch, resp.Status)
		}
		return resp.Body, nil
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("%w: file URI with remote host %q", ErrFetch, u.Host)
		}
		local = u.Path
	case "":
		local = raw
	default:
		return nil, fmt.Errorf("%w: unsupported scheme %q", ErrFetch, u.Scheme)
	}
	if !filepath.IsAbs(local) {
		return nil, fmt.Errorf("%w: not an absolute path", ErrFetch)
	}
	f, err := openAs(local, cred)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: not a regular file", ErrFetch)
	}
	return f, nil
}

// baseName is the file name a URI is saved as without an OutputFile.
func baseName(raw string) (string, error) {
	p := raw
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		p = u.Path
	}
	base := path.Base(p)
	if base == "" || base == "." || base == "/" || base == ".." {
		return "", fmt.Errorf("%w: no file name in the URI; set output_file", ErrFetch)
	}
	return base, nil
}

// archiveKind is "tar", "tgz" or "zip" for a name with a known archive
// suffix, or "".
func archiveKind(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"):
		return "tgz"
	case strings.HasSuffix(n, ".tar"):
		return "tar"
	case strings.HasSuffix(n, ".zip"):
		return "zip"
	}
	return ""
}

// redact hides a URL's password for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}

// copyCtx copies src to w until EOF, an error, or ctx is done.
func copyCtx(ctx context.Context, w io.Writer, src io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
