package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// inputFile is one file of a job's input.
type inputFile struct {
	path string
	size int64
}

// errInput is a job's input that cannot be read as lines of files.
var errInput = errors.New("input")

// listFiles returns the files of an input given as files and
// directories: each path in the order given, a directory's files in path
// order. Symbolic links are followed, to files and to directories; a link
// whose target is missing, a link that leads back into a directory being
// listed, and anything that is neither a regular file nor a directory
// (a device, a socket, a pipe) are refused with an error naming them.
// Inside directories, names starting with "." or "_" are skipped, as
// Hadoop skips them: a job's own output directory holds _SUCCESS and
// _temporary, and may be another job's input.
func listFiles(paths []string) ([]inputFile, error) {
	var out []inputFile
	for _, p := range paths {
		files, err := listPath(p, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no files in %s", errInput, strings.Join(paths, ", "))
	}
	return out, nil
}

// listPath lists one path, following symlinks; within are the real
// paths of the directories being listed above it.
func listPath(p string, within []string) ([]inputFile, error) {
	info, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(p); lerr == nil {
				return nil, fmt.Errorf("%w: %s: a symbolic link whose target is missing", errInput, p)
			}
		}
		return nil, fmt.Errorf("%w: %w", errInput, err)
	}
	switch {
	case info.Mode().IsRegular():
		return []inputFile{{path: p, size: info.Size()}}, nil
	case !info.IsDir():
		return nil, fmt.Errorf("%w: %s: not a regular file or a directory (%s)", errInput, p, info.Mode().Type())
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errInput, err)
	}
	if slices.Contains(within, real) {
		return nil, fmt.Errorf("%w: %s: a symbolic link back into %s", errInput, p, real)
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errInput, err)
	}
	var out []inputFile
	for _, e := range entries { // ReadDir sorts by name
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		files, err := listPath(filepath.Join(p, e.Name()), append(within[:len(within):len(within)], real))
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// inputSize is the summed size of the input's files.
func inputSize(paths []string) (int64, error) {
	files, err := listFiles(paths)
	var n int64
	for _, f := range files {
		n += f.size
	}
	return n, err
}
