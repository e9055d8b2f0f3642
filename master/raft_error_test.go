package master

import (
	"errors"
	"fmt"
	"testing"

	"github.com/allot-project/allot/protocol"
	"github.com/allot-project/allot/raftstore"
)

// A command never proposed (this node no longer leads) is refused as
// ErrNotLeader, which clients take as not applied; one proposed and then
// orphaned by a leadership loss, or by a shutdown, may yet apply and is
// ErrUnavailable; a timeout is ErrTimeout.
func TestRaftError(t *testing.T) {
	for _, tc := range []struct {
		in   error
		want error
	}{
		{&raftstore.NotLeaderError{}, protocol.ErrNotLeader},
		{fmt.Errorf("%w: lost", raftstore.ErrLeadershipLost), protocol.ErrUnavailable},
		{raftstore.ErrShutdown, protocol.ErrUnavailable},
		{raftstore.ErrTimeout, protocol.ErrTimeout},
		{errors.New("disk on fire"), protocol.ErrUnavailable},
	} {
		got := raftError(tc.in)
		if !errors.Is(got, tc.want) {
			t.Errorf("raftError(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if errors.Is(got, protocol.ErrNotLeader) != (tc.want == protocol.ErrNotLeader) {
			t.Errorf("raftError(%v) = %v: only a command never proposed is ErrNotLeader", tc.in, got)
		}
	}
}
