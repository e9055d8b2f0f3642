package protocol

// LeaderAnnouncement is published on the leader subject by a master when it
// becomes the Raft leader, and periodically while it stays leader: once per
// heartbeat interval it asks of agents (every second while agents are few;
// docs/operations.md, "Heartbeats in a large cluster"). Receivers keep the
// announcement with the highest Term.
type LeaderAnnouncement struct {
	// ID is the leader's Raft server ID.
	ID string `msgpack:"id" json:"id"`
	// Term is the Raft term the leader was elected in.
	Term uint64 `msgpack:"term" json:"term"`
	// HTTPAddr is the host:port of the leader's HTTP API and web UI.
	HTTPAddr string `msgpack:"http,omitempty" json:"http_addr,omitempty"`
	// NATSURLs are client URLs of the masters' embedded NATS servers.
	NATSURLs []string `msgpack:"nats,omitempty" json:"nats_urls,omitempty"`
}

// TermHeader is the transport header that carries, on every command to an
// agent, the Raft term of the leader that sent it. An agent keeps the
// highest term it has seen (in commands and leader announcements) and drops
// a command from an older term: a leader that lost an election it has not
// noticed yet can no longer act on agents.
const TermHeader = "Allot-Term"
