package offers

import (
	"fmt"

	"github.com/allot-project/allot/protocol"
)

// MoveFramework puts a framework under another role, with another leaf
// weight (0 is 1), taking along what it runs and holds in offers: a
// scheduler that subscribes again may name a new role, as Mesos lets it.
// The new role's limits bind from now on; what the framework already holds
// is not taken back.
func (a *Allocator) MoveFramework(id protocol.FrameworkID, role string, weight float64) error {
	f, err := a.framework(id)
	if err != nil {
		return err
	}
	if weight == 0 {
		weight = 1
	}
	if !(weight > 0) {
		return fmt.Errorf("%w: framework weight %v", ErrInvalid, weight)
	}
	parent, err := a.tree.role(role, true)
	if err != nil {
		return err
	}
	leaf := f.leaf
	if leaf.weight != weight {
		leaf.weight = weight
		a.tree.invalidate(leaf)
		a.changed()
	}
	if leaf.parent == parent {
		return nil
	}
	// Out of the old roles' counters and holdings, into the new ones'.
	d, o := btoi(f.countedDemanding), btoi(f.countedOpen)
	a.tree.adjustCounts(leaf.parent, -d, -o)
	a.holdDelta(f, f.alloc, -1)
	a.tree.detach(leaf)
	a.tree.attach(parent, leaf)
	a.tree.adjustCounts(parent, d, o)
	a.holdDelta(f, f.alloc, 1)
	a.tree.invalidate(leaf)
	a.changed()
	return nil
}
