package pack

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The columns of the openb trace files, in order.
var (
	nodeColumns = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}
	podColumns  = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
		"qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}
)

// ParseError is bad input in a trace file, located so that it can be fixed:
// Line is 1-based and counts the header; Column is the 1-based field index,
// with Name the column's name (for malformed CSV, such as a stray quote,
// Column is the 1-based byte position encoding/csv reports and Name is
// empty; 0 when the whole record is wrong).
type ParseError struct {
	File   string
	Line   int
	Column int
	Name   string
	Err    error
}

func (e *ParseError) Error() string {
	switch {
	case e.Column == 0:
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	case e.Name == "":
		return fmt.Sprintf("%s:%d: column %d: %v", e.File, e.Line, e.Column, e.Err)
	default:
		return fmt.Sprintf("%s:%d: column %d (%s): %v", e.File, e.Line, e.Column, e.Name, e.Err)
	}
}

func (e *ParseError) Unwrap() error { return e.Err }

// table reads a CSV file with a known header, keeping what it needs to place
// an error.
type table struct {
	file    string
	columns []string
	r       *csv.Reader
	record  []string
}

func newTable(r io.Reader, file string, columns []string) (*table, error) {
	t := &table{file: file, columns: columns, r: csv.NewReader(r)}
	t.r.FieldsPerRecord = len(columns)
	t.r.ReuseRecord = true
	header, err := t.r.Read()
	if errors.Is(err, io.EOF) {
		return nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("empty file, want the header %s", strings.Join(columns, ","))}
	}
	if err != nil {
		return nil, t.readError(err)
	}
	for i, want := range columns {
		if got := strings.TrimSpace(strings.TrimPrefix(header[i], "\uFEFF")); got != want {
			return nil, &ParseError{File: file, Line: 1, Column: i + 1,
				Err: fmt.Errorf("header %q, want %q (columns: %s)", got, want, strings.Join(columns, ","))}
		}
	}
	return t, nil
}

// next reads the next record; it returns false at the end of the file.
func (t *table) next() (bool, error) {
	rec, err := t.r.Read()
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, t.readError(err)
	}
	t.record = rec
	return true, nil
}

// readError turns encoding/csv's error into a ParseError of this file.
func (t *table) readError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", t.file, err)
	}
	out := &ParseError{File: t.file, Line: pe.Line, Err: pe.Err}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		out.Err = fmt.Errorf("%w: want %d (%s)", pe.Err, len(t.columns), strings.Join(t.columns, ","))
		return out
	}
	out.Column = pe.Column // a byte position: the best encoding/csv knows
	return out
}

// fieldError places err at field i of the current record.
func (t *table) fieldError(i int, err error) error {
	line, _ := t.r.FieldPos(i)
	return &ParseError{File: t.file, Line: line, Column: i + 1, Name: t.columns[i], Err: err}
}

func (t *table) text(i int) string { return strings.TrimSpace(t.record[i]) }

// count parses field i as a non-negative integer.
func (t *table) count(i int) (int64, error) {
	v, err := strconv.ParseInt(t.text(i), 10, 64)
	if err != nil {
		return 0, t.fieldError(i, fmt.Errorf("%q is not an integer", t.text(i)))
	}
	if v < 0 {
		return 0, t.fieldError(i, fmt.Errorf("%d is negative", v))
	}
	return v, nil
}

// optionalTime parses field i as a time in seconds, NoTime when empty.
func (t *table) optionalTime(i int) (int64, error) {
	if t.text(i) == "" {
		return NoTime, nil
	}
	return t.count(i)
}

// ParseNodes reads a node list (sn,cpu_milli,memory_mib,gpu,model); file
// names the input in errors.
func ParseNodes(r io.Reader, file string) ([]Node, error) {
	t, err := newTable(r, file, nodeColumns)
	if err != nil {
		return nil, err
	}
	var nodes []Node
	seen := map[string]bool{}
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		n := Node{Name: t.text(0), Model: t.text(4)}
		if n.Name == "" {
			return nil, t.fieldError(0, errors.New("empty node name"))
		}
		if seen[n.Name] {
			return nil, t.fieldError(0, fmt.Errorf("node %q listed twice", n.Name))
		}
		seen[n.Name] = true
		if n.CPUMilli, err = t.count(1); err != nil {
			return nil, err
		}
		if n.MemoryMiB, err = t.count(2); err != nil {
			return nil, err
		}
		gpus, err := t.count(3)
		if err != nil {
			return nil, err
		}
		n.GPUs = int(gpus)
		if n.GPUs > 0 && n.Model == "" {
			return nil, t.fieldError(4, fmt.Errorf("a node with %d GPUs needs a model", n.GPUs))
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, &ParseError{File: file, Line: 1, Err: errors.New("no nodes")}
	}
	return nodes, nil
}

// ParsePods reads a pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli,
// gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time); file
// names the input in errors. Pods get IDs in file order.
//
// GPU requests follow the trace's convention: num_gpu 0 asks for no GPU
// (gpu_milli must be 0); num_gpu 1 asks for gpu_milli of one device
// (1..1000, 1000 being a whole GPU); num_gpu above 1 asks for that many
// whole devices, so gpu_milli must be 1000 (every such pod in openb has it).
func ParsePods(r io.Reader, file string) ([]Pod, error) {
	t, err := newTable(r, file, podColumns)
	if err != nil {
		return nil, err
	}
	var pods []Pod
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		p, err := t.pod()
		if err != nil {
			return nil, err
		}
		p.ID = len(pods)
		pods = append(pods, p)
	}
	if len(pods) == 0 {
		return nil, &ParseError{File: file, Line: 1, Err: errors.New("no pods")}
	}
	return pods, nil
}

// pod parses the current record as a pod.
func (t *table) pod() (Pod, error) {
	p := Pod{Name: t.text(0), QoS: t.text(6), Phase: t.text(7)}
	if p.Name == "" {
		return p, t.fieldError(0, errors.New("empty pod name"))
	}
	var err error
	if p.CPUMilli, err = t.count(1); err != nil {
		return p, err
	}
	if p.MemoryMiB, err = t.count(2); err != nil {
		return p, err
	}
	num, err := t.count(3)
	if err != nil {
		return p, err
	}
	p.NumGPU = int(num)
	if p.GPUMilli, err = t.count(4); err != nil {
		return p, err
	}
	if err := t.checkGPURequest(p.NumGPU, p.GPUMilli); err != nil {
		return p, err
	}
	if p.Models, err = t.models(5); err != nil {
		return p, err
	}
	if p.Created, err = t.count(8); err != nil {
		return p, err
	}
	if p.Deleted, err = t.optionalTime(9); err != nil {
		return p, err
	}
	if p.Scheduled, err = t.optionalTime(10); err != nil {
		return p, err
	}
	return p, nil
}

// checkGPURequest enforces the trace's GPU conventions (see ParsePods).
func (t *table) checkGPURequest(num int, milli int64) error {
	switch {
	case milli > DeviceMilli:
		return t.fieldError(4, fmt.Errorf("%d is more than one GPU (%d)", milli, DeviceMilli))
	case num == 0 && milli != 0:
		return t.fieldError(4, fmt.Errorf("%d milli-GPU with num_gpu 0", milli))
	case num == 1 && milli == 0:
		return t.fieldError(4, errors.New("0 milli-GPU with num_gpu 1"))
	case num > 1 && milli != DeviceMilli:
		return t.fieldError(4, fmt.Errorf("%d milli-GPU with num_gpu %d: a pod of several GPUs must ask for whole ones (%d)", milli, num, DeviceMilli))
	}
	return nil
}

// models parses field i as a gpu_spec: models separated by "|".
func (t *table) models(i int) ([]string, error) {
	spec := t.text(i)
	if spec == "" {
		return nil, nil
	}
	var models []string
	for m := range strings.SplitSeq(spec, "|") {
		m = strings.TrimSpace(m)
		if m == "" {
			return nil, t.fieldError(i, fmt.Errorf("empty model in %q", spec))
		}
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	return models, nil
}
