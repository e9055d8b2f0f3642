package protocol

import (
	"errors"
	"testing"
)

func TestReviveRequest_Validate(t *testing.T) {
	ok := ReviveRequest{FrameworkID: "fw-1", Refusals: []AgentRefusal{{AgentID: "ag-1", Seconds: 2.5}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]ReviveRequest{
		"bad agent":        {FrameworkID: "fw-1", Refusals: []AgentRefusal{{AgentID: "not an id", Seconds: 1}}},
		"negative seconds": {FrameworkID: "fw-1", Refusals: []AgentRefusal{{AgentID: "ag-1", Seconds: -1}}},
		"too long":         {FrameworkID: "fw-1", Refusals: []AgentRefusal{{AgentID: "ag-1", Seconds: MaxRefuseSeconds + 1}}},
		"too many":         {FrameworkID: "fw-1", Refusals: make([]AgentRefusal, MaxListLen+1)},
	} {
		if err := r.Validate(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}
