package loadgen

import (
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// termWatch records the leader terms announced on the leader subject:
// each new term is an election.
type termWatch struct {
	nc *nats.Conn
	mu sync.Mutex
	// terms are the distinct terms announced.
	terms map[uint64]bool
}

func watchTerms(urls []string) (*termWatch, error) {
	nc, err := nats.Connect(strings.Join(urls, ","), clientOptions()...)
	if err != nil {
		return nil, err
	}
	w := &termWatch{nc: nc, terms: map[uint64]bool{}}
	if _, err := nc.Subscribe(protocol.Subjects{}.Leader(), func(m *nats.Msg) {
		env, err := protocol.Decode(m.Data)
		var ann protocol.LeaderAnnouncement
		if err == nil && protocol.DecodeBody(env, &ann) == nil {
			w.mu.Lock()
			w.terms[ann.Term] = true
			w.mu.Unlock()
		}
	}); err != nil {
		nc.Close()
		return nil, err
	}
	return w, nc.Flush()
}

// count is how many terms were announced.
func (w *termWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.terms)
}

func (w *termWatch) close() { w.nc.Close() }
