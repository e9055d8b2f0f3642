package runner

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinkTarget bounds a zip symlink's target, like PATH_MAX.
const maxLinkTarget = 4096

// extractor writes archive entries below dir, a sandbox-relative directory,
// refusing any entry that would land outside the sandbox.
type extractor struct {
	sandbox  string
	dir      string
	symlinks bool
}

// extract unpacks the archive file of the given kind ("tar", "tgz", "zip")
// into dir inside the sandbox and reports whether it created symlinks.
func extract(sandbox, dir, archive, kind string) (bool, error) {
	x := &extractor{sandbox: sandbox, dir: dir}
	var err error
	if kind == "zip" {
		err = x.zip(archive)
	} else {
		err = x.tar(archive, kind == "tgz")
	}
	return x.symlinks, err
}

func (x *extractor) tar(archive string, gz bool) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%w: gzip: %w", ErrFetch, err)
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: tar: %w", ErrFetch, err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = x.mkdir(hdr.Name)
		case tar.TypeReg:
			err = x.file(hdr.Name, tr, hdr.FileInfo().Mode())
		case tar.TypeSymlink:
			err = x.symlink(hdr.Name, hdr.Linkname)
		case tar.TypeLink:
			err = x.hardlink(hdr.Name, hdr.Linkname)
		default:
			// Devices, fifos and the like have no place in a sandbox.
			_, err = x.check(hdr.Name)
		}
		if err != nil {
			return err
		}
	}
}

func (x *extractor) zip(archive string) error {
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return fmt.Errorf("%w: zip: %w", ErrFetch, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		mode := f.Mode()
		switch {
		case mode.IsDir():
			err = x.mkdir(f.Name)
		case mode&fs.ModeSymlink != 0:
			err = x.zipSymlink(f)
		case mode.IsRegular():
			err = x.zipFile(f)
		default:
			_, err = x.check(f.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) zipFile(f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%w: zip %s: %w", ErrFetch, f.Name, err)
	}
	defer rc.Close()
	return x.file(f.Name, rc, f.Mode())
}

func (x *extractor) zipSymlink(f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%w: zip %s: %w", ErrFetch, f.Name, err)
	}
	defer rc.Close()
	target, err := io.ReadAll(io.LimitReader(rc, maxLinkTarget+1))
	if err != nil {
		return fmt.Errorf("%w: zip %s: %w", ErrFetch, f.Name, err)
	}
	if len(target) > maxLinkTarget {
		return fmt.Errorf("%w: zip %s: symlink target too long", ErrFetch, f.Name)
	}
	return x.symlink(f.Name, string(target))
}

// check validates an entry's name and returns it relative to the sandbox.
func (x *extractor) check(name string) (string, error) {
	if name == "" || path.IsAbs(name) {
		return "", fmt.Errorf("%w: archive entry %q", ErrSandboxEscape, name)
	}
	for _, p := range strings.Split(name, "/") {
		if p == ".." {
			return "", fmt.Errorf("%w: archive entry %q contains a .. element", ErrSandboxEscape, name)
		}
	}
	return path.Join(x.dir, name), nil
}

func (x *extractor) mkdir(name string) error {
	rel, err := x.check(name)
	if err != nil {
		return err
	}
	if rel == "." || rel == x.dir {
		return nil
	}
	if err := checkRelPath(rel); err != nil {
		return fmt.Errorf("archive entry %q: %w", name, err)
	}
	_, err = resolveIn(x.sandbox, rel, followLast|createDirs)
	return x.wrap(name, err)
}

func (x *extractor) file(name string, r io.Reader, mode fs.FileMode) error {
	target, err := x.target(name)
	if err != nil {
		return err
	}
	perm := mode.Perm()
	if perm == 0 {
		perm = 0o644
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm|0o200)
	if err != nil {
		return x.wrap(name, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(target, perm)
	}
	return x.wrap(name, err)
}

func (x *extractor) symlink(name, linkname string) error {
	target, err := x.target(name)
	if err != nil {
		return err
	}
	if linkname == "" || filepath.IsAbs(linkname) {
		return fmt.Errorf("%w: archive symlink %q -> %q", ErrSandboxEscape, name, linkname)
	}
	dir, err := filepath.Rel(x.sandbox, filepath.Dir(target))
	if err != nil {
		return err
	}
	if _, err := resolveIn(x.sandbox, filepath.ToSlash(dir)+"/"+linkname, followLast); err != nil && !errors.Is(err, errLinkLoop) {
		return fmt.Errorf("archive symlink %q -> %q: %w", name, linkname, err)
	}
	x.symlinks = true
	return x.wrap(name, os.Symlink(linkname, target))
}

func (x *extractor) hardlink(name, linkname string) error {
	target, err := x.target(name)
	if err != nil {
		return err
	}
	srcRel, err := x.check(linkname)
	if err != nil {
		return err
	}
	src, err := resolveIn(x.sandbox, srcRel, followLast)
	if err != nil {
		return fmt.Errorf("archive link %q -> %q: %w", name, linkname, err)
	}
	if fi, err := os.Lstat(src); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: archive link %q -> %q: not a regular file in the archive", ErrFetch, name, linkname)
	}
	return x.wrap(name, os.Link(src, target))
}

// target resolves where the entry name is written and clears whatever
// non-directory is there, so that nothing is written through a symlink.
func (x *extractor) target(name string) (string, error) {
	rel, err := x.check(name)
	if err != nil {
		return "", err
	}
	target, err := targetIn(x.sandbox, rel)
	if err != nil {
		return "", fmt.Errorf("archive entry %q: %w", name, err)
	}
	if fi, err := os.Lstat(target); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("%w: archive entry %q: a directory is in the way", ErrFetch, name)
		}
		if err := os.Remove(target); err != nil {
			return "", x.wrap(name, err)
		}
	}
	return target, nil
}

// wrap marks a filesystem error while writing an entry as a fetch failure.
func (x *extractor) wrap(name string, err error) error {
	if err == nil || errors.Is(err, ErrSandboxEscape) || errors.Is(err, ErrFetch) {
		return err
	}
	return fmt.Errorf("%w: archive entry %q: %w", ErrFetch, name, err)
}
