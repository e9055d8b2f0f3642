package protocol

import "fmt"

// MaxIngressChunk is the most bytes one IngressRequest may ask for.
const MaxIngressChunk = 4 << 20

// IngressRequest is a sending agent's request to a receiving agent's
// shuffle ingress (its subject ShuffleIngress(Dst)) for the next Bytes of a
// transfer into Dst. The receiver answers with an empty Reply once its
// port grants them: the port's capacity (allot agent --shuffle-ingress) is
// shared a chunk at a time by the ranks of the leader's ingress list for
// it (CoflowPrioritiesCommand.Ingress), unranked transfers last. A request
// with Done set says the transfer ended and gets no answer.
type IngressRequest struct {
	FrameworkID FrameworkID `msgpack:"fw" json:"framework_id"`
	CoflowID    string      `msgpack:"cf" json:"coflow_id"`
	Src         AgentID     `msgpack:"src" json:"src"`
	Dst         AgentID     `msgpack:"dst" json:"dst"`
	// Transfer numbers the transfer at its sender; with Src it names the
	// transfer at the receiver.
	Transfer uint64 `msgpack:"tr" json:"transfer"`
	Bytes    int    `msgpack:"n,omitempty" json:"bytes,omitempty"`
	Done     bool   `msgpack:"done,omitempty" json:"done,omitempty"`
}

// Validate checks IDs and the byte count: 1 to MaxIngressChunk, or 0 with
// Done.
func (r IngressRequest) Validate() error {
	if err := checkID("framework_id", r.FrameworkID); err != nil {
		return err
	}
	if err := checkID("coflow_id", r.CoflowID); err != nil {
		return err
	}
	if err := checkID("src", r.Src); err != nil {
		return err
	}
	if err := checkID("dst", r.Dst); err != nil {
		return err
	}
	switch {
	case r.Done && r.Bytes != 0:
		return Errorf(ErrInvalidArgument, "a done transfer asks for %d bytes", r.Bytes)
	case !r.Done && (r.Bytes <= 0 || r.Bytes > MaxIngressChunk):
		return Errorf(ErrInvalidArgument, "bytes %d: want 1 to %d", r.Bytes, MaxIngressChunk)
	}
	return nil
}

// ShuffleIngress returns the subject of agent id's shuffle ingress, e.g.
// "allot.shuffle.ag-1.ingress". Only agents may use it.
func (s Subjects) ShuffleIngress(id AgentID) (string, error) {
	if err := checkToken("agent id", string(id)); err != nil {
		return "", fmt.Errorf("shuffle ingress subject: %w", err)
	}
	return s.prefix() + ".shuffle." + string(id) + ".ingress", nil
}

// ShuffleIngressAll is every agent's shuffle ingress subject.
func (s Subjects) ShuffleIngressAll() string { return s.prefix() + ".shuffle.*.ingress" }
