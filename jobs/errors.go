package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// ErrInvalidJob is what every problem with a job file wraps.
var ErrInvalidJob = errors.New("invalid job")

// Problem is one thing wrong in a job file, where it is.
type Problem struct {
	File         string
	Line, Column int
	Message      string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Column, p.Message)
}

// Problems is every problem found in a job file, in file order. It is an
// error that wraps ErrInvalidJob.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

func (ps Problems) Unwrap() error { return ErrInvalidJob }

// problems collects Problems as a file is read.
type problems struct {
	file string
	list Problems
}

// at records a problem at r (the file's start when r is empty).
func (p *problems) at(r hcl.Range, format string, args ...any) {
	p.list = append(p.list, Problem{File: p.file, Line: r.Start.Line, Column: r.Start.Column, Message: fmt.Sprintf(format, args...)})
}

// diags records HCL's own diagnostics (syntax, unknown or mistyped
// fields).
func (p *problems) diags(ds hcl.Diagnostics) {
	for _, d := range ds {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + strings.TrimSuffix(d.Detail, ".")
		}
		var r hcl.Range
		if d.Subject != nil {
			r = *d.Subject
		}
		p.at(r, "%s", msg)
	}
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	slices.SortStableFunc(p.list, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return p.list
}
