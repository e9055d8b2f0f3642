package coflowbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/sim/coflowsim"
)

// readChunk is how much of a download the receiver reads at a time.
const readChunk = 64 << 10

// replayer replays coflows as downloads between the agents: trace port i
// is agents[i], a flow from port s to port d is a download of its bytes
// from agent s's blob by receiver d (this process), which names the
// coflow and d so that agent s paces it by the leader's priorities, and
// asks agent d's ingress for every chunk of it.
type replayer struct {
	driver   *framework.Driver
	agents   []agentBlob
	token    string
	client   *http.Client
	register bool // register each coflow with the leader (coordinated)
}

// coflowResult is one coflow's completion time, from its arrival in the
// trace to its last flow's last byte.
type coflowResult struct {
	ID  string
	CCT time.Duration
}

// run replays tr from now on: each coflow starts at its arrival, and run
// returns once every coflow has completed, with their times in trace
// order.
func (r *replayer) run(ctx context.Context, tr *coflowsim.Trace) ([]coflowResult, error) {
	start := time.Now()
	results := make([]coflowResult, len(tr.Coflows))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for i, c := range tr.Coflows {
		arrival := start.Add(time.Duration(c.ArrivalMs) * time.Millisecond)
		if err := sleepUntil(ctx, arrival); err != nil {
			break
		}
		wg.Go(func() {
			err := r.coflow(ctx, c)
			results[i] = coflowResult{ID: c.ID, CCT: time.Since(arrival)}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("coflow %s: %w", c.ID, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return results, ctx.Err()
}

// coflow registers c (when coordinated) and downloads all its flows at
// once.
func (r *replayer) coflow(ctx context.Context, c coflowsim.TraceCoflow) error {
	id := "c" + c.ID
	if r.register {
		flows := make([]protocol.FlowSpec, len(c.Flows))
		for i, f := range c.Flows {
			flows[i] = protocol.FlowSpec{Src: r.agents[f.Src].id, Dst: r.agents[f.Dst].id, Transfers: 1}
		}
		if err := r.driver.RegisterCoflow(ctx, id, flows); err != nil {
			return fmt.Errorf("register: %w", err)
		}
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, f := range c.Flows {
		wg.Go(func() {
			if err := r.fetch(ctx, id, f); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fetch downloads one flow's bytes from its sender's blob, as its
// receiver.
func (r *replayer) fetch(ctx context.Context, coflow string, f coflowsim.TraceFlow) error {
	src, dst := r.agents[f.Src], r.agents[f.Dst]
	q := url.Values{"path": {src.path}, "coflow": {coflow}, "dst": {string(dst.id)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+src.addr+"/v1/files/download?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Range", "bytes=0-"+strconv.FormatInt(f.Bytes-1, 10))
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("flow %d->%d: %w", f.Src, f.Dst, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent && resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("flow %d->%d: %s: %s", f.Src, f.Dst, resp.Status, body)
	}
	buf := make([]byte, readChunk)
	for left := f.Bytes; left > 0; {
		k := int(min(int64(len(buf)), left))
		n, err := io.ReadFull(resp.Body, buf[:k])
		left -= int64(n)
		if err != nil {
			return fmt.Errorf("flow %d->%d: %d bytes short: %w", f.Src, f.Dst, left, err)
		}
	}
	return nil
}

func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
