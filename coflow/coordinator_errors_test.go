package coflow

import (
	"errors"
	"math"
	"testing"
)

func TestCoordinator_Errors(t *testing.T) {
	co := mustNew(t, testConfig(SchedulerPhilae, 4))
	mustRegister(t, co, 1, testCoflow{id: "A", flows: []flowMB{{0, 1, 1}}})
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"duplicate coflow", co.Register(at(1), spec(testCoflow{id: "A", flows: []flowMB{{0, 1, 1}}})), ErrDuplicateCoflow},
		{"bad port", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 4}}}), ErrBadPort},
		{"negative port", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: -1, Dst: 1}}}), ErrBadPort},
		{"duplicate flow", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 1}, {Src: 0, Dst: 1}}}), ErrDuplicateFlow},
		{"no flows", co.Register(at(1), CoflowSpec{ID: "B"}), ErrBadSpec},
		{"negative size", co.Register(at(1), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 1, Size: -1}}}), ErrBadSpec},
		{"time backwards", co.Register(at(0), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 1}}}), ErrTimeBackwards},
		{"flow of unknown coflow", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"Z", 0}}), ErrUnknownCoflow},
		{"unknown flow", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 1}}), ErrUnknownFlow},
		{"negative bytes", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: -1}), ErrBadBytes},
		{"pilot mismatch", co.FlowCompleted(at(1), FlowCompletion{Flow: FlowRef{"A", 0}, Pilot: true}), ErrPilotMismatch},
		{"progress of unknown coflow", co.Progress(at(1), []FlowProgress{{Flow: FlowRef{"Z", 0}}}), ErrUnknownCoflow},
		{"negative progress", co.Progress(at(1), []FlowProgress{{Flow: FlowRef{"A", 0}, Sent: -1}}), ErrBadBytes},
		{"deregister unknown", co.Deregister(at(1), "Z"), ErrUnknownCoflow},
		{"info unknown", func() error { _, err := co.Info("Z"); return err }(), ErrUnknownCoflow},
		{"decide backwards", func() error { _, err := co.Decide(at(0)); return err }(), ErrTimeBackwards},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := co.FlowCompleted(at(2), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: mb}); err != nil {
		t.Fatal(err)
	}
	if err := co.FlowCompleted(at(2), FlowCompletion{Flow: FlowRef{"A", 0}, Bytes: mb}); !errors.Is(err, ErrFlowFinished) {
		t.Errorf("second completion: got %v, want ErrFlowFinished", err)
	}
	// The wire code survives: a bad port is an invalid argument.
	err := co.Register(at(2), CoflowSpec{ID: "B", Flows: []FlowSpec{{Src: 0, Dst: 9}}})
	if !errors.Is(err, ErrBadPort) || !isInvalidArgument(err) {
		t.Errorf("bad port error %v does not match protocol.ErrInvalidArgument", err)
	}

	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want error
	}{
		{"scheduler", func(c *Config) { c.Scheduler = "varys" }, ErrUnknownScheduler},
		{"policy", func(c *Config) { c.Policy = "E" }, ErrUnknownPolicy},
		{"ports", func(c *Config) { c.Ports = 0 }, ErrInvalidConfig},
		{"growth", func(c *Config) { c.QueueGrowth = 1 }, ErrInvalidConfig},
		{"pilot fraction", func(c *Config) { c.PilotFraction = 0 }, ErrInvalidConfig},
		{"slot", func(c *Config) { c.Slot = 0 }, ErrInvalidConfig},
		{"capacity", func(c *Config) { c.Capacity = math.NaN() }, ErrInvalidConfig},
	} {
		cfg := DefaultConfig(4)
		tc.mod(&cfg)
		if _, err := New(cfg); !errors.Is(err, tc.want) {
			t.Errorf("config %s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}
