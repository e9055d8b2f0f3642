package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// resolveMode says how resolveIn treats the path it walks.
type resolveMode int

const (
	// followLast follows a symlink in the last element too.
	followLast resolveMode = 1 << iota
	// createDirs creates missing elements as directories.
	createDirs
)

// maxLinks bounds the symlinks followed in one resolution, like the
// kernel's ELOOP limit.
const maxLinks = 40

// errLinkLoop reports a resolution that followed too many symlinks.
var errLinkLoop = errors.New("too many levels of symbolic links")

// resolveIn resolves the slash-separated relative path rel inside root (an
// absolute path without symlinks) the way the kernel would, following the
// symlinks it finds, but fails with ErrSandboxEscape as soon as a step
// would leave root: a ".." above it, or a symlink with an absolute target
// outside it. The result lies inside root and not in its reserved .allot directory.
func resolveIn(root, rel string, mode resolveMode) (string, error) {
	parts := strings.Split(rel, "/")
	cur := root
	links := 0
	for len(parts) > 0 {
		p := parts[0]
		parts = parts[1:]
		switch p {
		case "", ".":
			continue
		case "..":
			if cur == root {
				return "", fmt.Errorf("%w: %q leads above the sandbox", ErrSandboxEscape, rel)
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, p)
		if len(parts) == 0 && mode&followLast == 0 {
			cur = next
			break
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if mode&createDirs != 0 {
				if err := os.Mkdir(next, 0o755); err != nil {
					return "", err
				}
			}
			cur = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", fmt.Errorf("%q: %w", rel, errLinkLoop)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			if filepath.IsAbs(target) {
				if !within(root, target) {
					return "", fmt.Errorf("%w: %q links to %q", ErrSandboxEscape, rel, target)
				}
				cur = root
				target, _ = filepath.Rel(root, filepath.Clean(target))
			}
			parts = append(strings.Split(filepath.ToSlash(target), "/"), parts...)
			continue
		case mode&createDirs != 0 && !fi.IsDir():
			return "", fmt.Errorf("%q: %s is not a directory", rel, p)
		}
		cur = next
	}
	if within(filepath.Join(root, legacyControlDir), cur) {
		return "", fmt.Errorf("%w: %q resolves into the reserved %s directory", ErrSandboxEscape, rel, legacyControlDir)
	}
	return cur, nil
}

// targetIn returns where a file named by the sandbox-relative path rel is
// to be written: its parent directory resolved inside root (and created
// when missing) joined with its last element, which is not followed.
func targetIn(root, rel string) (string, error) {
	if err := checkRelPath(rel); err != nil {
		return "", err
	}
	rel = path.Clean(rel)
	dir, err := resolveIn(root, path.Dir(rel), followLast|createDirs)
	if err != nil {
		return "", err
	}
	target := filepath.Join(dir, path.Base(rel))
	if within(filepath.Join(root, legacyControlDir), target) {
		return "", fmt.Errorf("%w: %q resolves into the reserved %s directory", ErrSandboxEscape, rel, legacyControlDir)
	}
	return target, nil
}

// within reports whether p is dir or lies below it (lexically).
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// auditSymlinks checks every symlink under root once more: a link that was safe when it was made can be
// turned outward by a later one (a/l -> ../b/../x, then b -> .). It
// removes the first escaping link it finds and reports it. Symlink loops
// are left alone: they lead nowhere.
func auditSymlinks(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if _, err := resolveIn(root, filepath.ToSlash(rel), followLast); err != nil && !errors.Is(err, errLinkLoop) {
			_ = os.Remove(p)
			return fmt.Errorf("symlink %s: %w", rel, err)
		}
		return nil
	})
}
