package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/allot-project/allot/protocol"
)

// RegisterCoflow registers a coflow with the master, so that the agents
// sending its flows order them against other coflows (Philae by default):
// typically one MapReduce shuffle, whose flows go from the agents holding
// map outputs to the agents running reducers. The consumers fetch with the
// coflow's ID and their own agent's ID (query parameters coflow and dst of
// the agents' file server download). Registering an ID again replaces the
// totals of the flows listed and adds the others, so a shuffle can grow
// as its reducers are placed; the master forgets the coflow once every
// flow has finished. The driver remembers the coflow, and registers it
// again with a new leader, until WithdrawCoflow.
func (d *Driver) RegisterCoflow(ctx context.Context, coflowID string, flows []protocol.FlowSpec) error {
	id, req, err := d.session()
	if err != nil {
		return err
	}
	r := protocol.CoflowRegisterRequest{FrameworkID: id, CoflowID: coflowID, Flows: flows}
	if err := r.Validate(); err != nil {
		return err
	}
	d.mu.Lock()
	if d.coflows == nil {
		d.coflows = map[string][]protocol.FlowSpec{}
	}
	d.coflows[coflowID] = mergeFlows(d.coflows[coflowID], flows)
	d.mu.Unlock()
	if err := req.retry(ctx, protocol.VerbCoflowRegister, r, nil, nil); err != nil {
		return d.checkFatal(fmt.Errorf("register coflow %s: %w", coflowID, err))
	}
	return nil
}

// WithdrawCoflow tells the master to forget a coflow (its job ended or
// gave up) and stops registering it with new leaders.
func (d *Driver) WithdrawCoflow(ctx context.Context, coflowID string) error {
	id, req, err := d.session()
	if err != nil {
		return err
	}
	d.mu.Lock()
	delete(d.coflows, coflowID)
	d.mu.Unlock()
	r := protocol.CoflowRegisterRequest{FrameworkID: id, CoflowID: coflowID, Withdraw: true}
	if err := r.Validate(); err != nil {
		return err
	}
	if err := req.retry(ctx, protocol.VerbCoflowRegister, r, nil, nil); err != nil {
		return d.checkFatal(fmt.Errorf("withdraw coflow %s: %w", coflowID, err))
	}
	return nil
}

// mergeFlows is what the master holds after flows are registered on top
// of have: listed pairs replaced, new ones added.
func mergeFlows(have, flows []protocol.FlowSpec) []protocol.FlowSpec {
	out := slices.Clone(have)
	for _, f := range flows {
		i := slices.IndexFunc(out, func(g protocol.FlowSpec) bool { return g.Src == f.Src && g.Dst == f.Dst })
		if i < 0 {
			out = append(out, f)
			continue
		}
		out[i] = f
	}
	return out
}

// reregisterCoflows registers the remembered coflows with a new leader
// (coflow state lives in the leader's memory). A coflow that finished
// meanwhile is registered again; its flows' senders report nothing more,
// so it stays until withdrawn.
func (d *Driver) reregisterCoflows(ctx context.Context, id protocol.FrameworkID) error {
	d.mu.Lock()
	coflows := maps.Clone(d.coflows)
	d.mu.Unlock()
	for _, cf := range slices.Sorted(maps.Keys(coflows)) {
		r := protocol.CoflowRegisterRequest{FrameworkID: id, CoflowID: cf, Flows: coflows[cf]}
		err := d.req.retry(ctx, protocol.VerbCoflowRegister, r, nil, nil)
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("register coflow %s: %w", cf, err)
		case err != nil:
			// One refused coflow (an agent of it gone, say) must not
			// keep the framework's state from being restored.
			d.logger.Warn("could not register a coflow again with the new leader", "coflow_id", cf, "error", err)
		}
	}
	return nil
}
