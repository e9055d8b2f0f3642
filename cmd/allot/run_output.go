package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
)

// runOutput prints the instances' stdout and stderr as they grow, read
// from their agents' file servers with the framework's files token.
type runOutput struct {
	d              *framework.Driver
	s              *runScheduler
	prefix         bool
	stdout, stderr io.Writer
	// printed and partial are, by instance and file (0 stdout, 1 stderr),
	// the bytes printed and an unfinished last line held back.
	printed map[[2]int]int
	partial map[[2]int][]byte
	done    map[int]bool
}

func newRunOutput(d *framework.Driver, s *runScheduler, prefix bool, stdout, stderr io.Writer) *runOutput {
	return &runOutput{d: d, s: s, prefix: prefix, stdout: stdout, stderr: stderr,
		printed: map[[2]int]int{}, partial: map[[2]int][]byte{}, done: map[int]bool{}}
}

// poll prints what instance i, launched on o, wrote since the last poll;
// ended says it is terminal, so this is the last read.
func (r *runOutput) poll(i int, o protocol.Offer, ended bool) {
	if r.done[i] || o.Addresses.HTTP == "" {
		return
	}
	for k, name := range []string{"stdout", "stderr"} {
		key := [2]int{i, k}
		data, err := r.read(o, r.s.tasks[i].TaskID, name, r.printed[key])
		if err != nil {
			if ended {
				fmt.Fprintf(r.stderr, "allot run: instance %d: reading its %s: %v\n", i, name, err)
			}
			continue
		}
		r.write(key, data, ended)
		r.printed[key] += len(data)
	}
	r.done[i] = ended
}

// write prints new bytes of one file, line by line when prefixed.
func (r *runOutput) write(key [2]int, b []byte, flush bool) {
	w := r.stdout
	if key[1] == 1 {
		w = r.stderr
	}
	if !r.prefix {
		_, _ = w.Write(b)
		return
	}
	buf := append(r.partial[key], b...)
	for {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			break
		}
		fmt.Fprintf(w, "[%d] %s\n", key[0], buf[:nl])
		buf = buf[nl+1:]
	}
	if flush && len(buf) > 0 {
		fmt.Fprintf(w, "[%d] %s\n", key[0], buf)
		buf = nil
	}
	r.partial[key] = append([]byte(nil), buf...)
}

// read downloads what a file of the task's sandbox holds from offset on.
func (r *runOutput) read(o protocol.Offer, task protocol.TaskID, name string, offset int) ([]byte, error) {
	path := string(r.d.ID()) + "_" + string(task) + "/" + name
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://"+o.Addresses.HTTP+"/v1/files/download?"+url.Values{"path": {path}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if token := r.d.FilesToken(); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Range", "bytes="+strconv.Itoa(offset)+"-")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		return data, nil
	case http.StatusRequestedRangeNotSatisfiable:
		return nil, nil // nothing new
	case http.StatusOK:
		// The whole file: what is new lies past offset.
		return data[min(offset, len(data)):], nil
	}
	return nil, fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(data))
}
