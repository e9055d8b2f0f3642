package protocol

// LeaderAnnouncement is published on the leader subject by a master when it
// becomes the Raft leader, and periodically while it stays leader. Receivers
// keep the announcement with the highest Term.
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
