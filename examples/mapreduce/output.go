package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A job's output directory holds what Hadoop's output committer leaves:
// part-r-NNNNN, one file per reducer, and an empty _SUCCESS once every
// reducer's file is in place. Reducers write into _temporary/<attempt>/
// and rename their file into place; the framework commits the job by
// removing _temporary and writing _SUCCESS. A directory without _SUCCESS
// holds a job that failed or has not finished.
const successFile = "_SUCCESS"

// jobOutputDir is where job spec's results go: the run's --output for a
// run of one job, a directory named after the job in it for several;
// empty without --output.
func jobOutputDir(cfg runConfig, spec jobSpec) string {
	switch {
	case cfg.output == "":
		return ""
	case len(cfg.jobs) == 1:
		return cfg.output
	default:
		return filepath.Join(cfg.output, spec.ID)
	}
}

// prepareOutput creates a job's output directory, which must not exist or
// be empty: a job never mixes its results with another's.
func prepareOutput(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("output %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("output %s already exists and is not empty", dir)
	}
	return os.MkdirAll(dir, 0o755)
}

// commitOutput checks that every reducer's file is in dir, removes the
// reducers' temporary files and marks the job done with _SUCCESS.
func commitOutput(dir string, reducers int) error {
	for r := range reducers {
		if _, err := os.Stat(filepath.Join(dir, outputName(r))); err != nil {
			return fmt.Errorf("output: reducer %d's file: %w", r, err)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, tempOutputDir)); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, successFile), nil, 0o644)
}
