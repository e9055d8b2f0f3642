package framework

import (
	"fmt"
	"testing"
	"time"

	"github.com/allot-project/allot/protocol"
)

// A subscribe again carries the driver's demand, suppression and refusals
// in force; one that would then exceed the subscribe's size limit goes
// without them (the restore after it sends them), and a new framework's
// never carries them.
func TestDriver_withResume(t *testing.T) {
	newDriver := func(refusals int) *Driver {
		d := &Driver{id: "fw-1", refusals: map[protocol.AgentID]time.Time{}}
		d.demand.own = protocol.DemandRequest{Demand: []protocol.TaskShape{{Resources: protocol.Scalars(map[string]int64{protocol.ResCPUs: 100}), Count: 2}}}
		d.demand.declared = true
		until := time.Now().Add(time.Hour)
		for i := range refusals {
			d.refusals[protocol.AgentID(fmt.Sprintf("ag-%026d", i))] = until
		}
		return d
	}
	base := protocol.SubscribeRequest{FrameworkID: "fw-1", Name: "f", Role: "eng", Suppressed: true}

	got, resumed := newDriver(3).withResume(base)
	if !resumed || got.Suppressed || got.Resume == nil || got.Resume.Demand == nil ||
		got.Resume.Demand.FrameworkID != "fw-1" || got.Resume.Demand.Demand[0].Count != 2 || len(got.Resume.Refusals) != 3 {
		t.Fatalf("resumed %v, request %+v: want the demand, three refusals, offers open", resumed, got)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("the resuming subscribe does not validate: %v", err)
	}

	// About 50 bytes a refusal: 2,000 of them exceed the 64 KiB limit.
	got, resumed = newDriver(2000).withResume(base)
	if resumed || got.Resume != nil || !got.Suppressed {
		t.Fatalf("resumed %v, request suppressed %v with resume %v: want the plain suppressed subscribe", resumed, got.Suppressed, got.Resume != nil)
	}

	fresh := base
	fresh.FrameworkID = ""
	if got, resumed = newDriver(3).withResume(fresh); resumed || got.Resume != nil {
		t.Fatalf("a new framework's subscribe carries a resume")
	}
}
