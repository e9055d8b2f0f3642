package raftstore

import (
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// inmemRPCTimeout bounds one in-memory RPC to a connected but unresponsive peer.
const inmemRPCTimeout = time.Second

// InmemNetwork connects the in-memory transports of InMemory nodes, and lets tests cut
// and restore links between them. Nodes are named by their node ID. Two attached nodes
// can talk if and only if they are in the same group; every node starts in the main
// group. Cuts are remembered by node ID, so a node that is restarted while disconnected
// stays disconnected. The zero value is not usable; use NewInmemNetwork.
type InmemNetwork struct {
	mu        sync.Mutex
	nodes     map[string]*inmemEndpoint
	group     map[string]int // node ID -> group; absent means the main group (0)
	nextGroup int
}

type inmemEndpoint struct {
	addr  raft.ServerAddress
	trans *raft.InmemTransport
}

// NewInmemNetwork returns an empty network in which every node can reach every other.
func NewInmemNetwork() *InmemNetwork {
	return &InmemNetwork{
		nodes: make(map[string]*inmemEndpoint),
		group: make(map[string]int),
	}
}

// Disconnect cuts node id off from every other node, in both directions.
func (n *InmemNetwork) Disconnect(id string) {
	n.Partition(id)
}

// Reconnect puts node id back in the main group, so it reaches every node that is not
// cut off itself.
func (n *InmemNetwork) Reconnect(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.group, id)
	n.relinkLocked()
}

// Partition moves the given nodes into a new group of their own: they reach each other
// and no one else.
func (n *InmemNetwork) Partition(ids ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextGroup++
	for _, id := range ids {
		n.group[id] = n.nextGroup
	}
	n.relinkLocked()
}

// Heal puts every node back in the main group.
func (n *InmemNetwork) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.group)
	n.relinkLocked()
}

// attach creates node id's transport at addr and links it to the nodes of its group.
// A transport already attached under id is detached first.
func (n *InmemNetwork) attach(id string, addr raft.ServerAddress) *raft.InmemTransport {
	_, trans := raft.NewInmemTransportWithTimeout(addr, inmemRPCTimeout)
	n.mu.Lock()
	defer n.mu.Unlock()
	if old, ok := n.nodes[id]; ok {
		n.detachLocked(id, old)
	}
	n.nodes[id] = &inmemEndpoint{addr: addr, trans: trans}
	n.relinkLocked()
	return trans
}

// detach removes node id's transport, if trans is still the one attached, and unlinks it.
func (n *InmemNetwork) detach(id string, trans *raft.InmemTransport) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ep, ok := n.nodes[id]; ok && ep.trans == trans {
		n.detachLocked(id, ep)
	}
}

func (n *InmemNetwork) detachLocked(id string, ep *inmemEndpoint) {
	delete(n.nodes, id)
	for _, other := range n.nodes {
		other.trans.Disconnect(ep.addr)
	}
	ep.trans.DisconnectAll()
}

// relinkLocked connects every pair of attached nodes in the same group and disconnects
// every other pair. Connect and Disconnect are idempotent.
func (n *InmemNetwork) relinkLocked() {
	for aid, a := range n.nodes {
		for bid, b := range n.nodes {
			if aid == bid {
				continue
			}
			if n.group[aid] == n.group[bid] {
				a.trans.Connect(b.addr, b.trans)
			} else {
				a.trans.Disconnect(b.addr)
			}
		}
	}
}
