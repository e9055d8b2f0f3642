package protocol

import (
	"errors"
	"testing"
	"time"
)

func TestHealthCheck_Validate(t *testing.T) {
	for _, ok := range []HealthCheck{
		{Type: HealthCheckCommand, Command: "test -e ready"},
		{Type: HealthCheckHTTP, Port: 8080, Path: "/health", Interval: time.Second, Timeout: time.Second, ConsecutiveFailures: 3},
		{Type: HealthCheckTCP, Port: 31000, GracePeriod: time.Minute},
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	for name, bad := range map[string]HealthCheck{
		"no type":          {Command: "true"},
		"unknown type":     {Type: "grpc", Port: 1},
		"no command":       {Type: HealthCheckCommand},
		"no port":          {Type: HealthCheckHTTP},
		"port too high":    {Type: HealthCheckTCP, Port: 70000},
		"relative path":    {Type: HealthCheckHTTP, Port: 80, Path: "health"},
		"negative timeout": {Type: HealthCheckTCP, Port: 80, Timeout: -time.Second},
		"interval too low": {Type: HealthCheckTCP, Port: 80, Interval: time.Millisecond},
		"negative fails":   {Type: HealthCheckTCP, Port: 80, ConsecutiveFailures: -1},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	// A task carries its check's validation.
	task := TaskInfo{TaskID: "t1", AgentID: "ag-1", Resources: Scalars(map[string]int64{ResCPUs: 100}),
		Command: CommandInfo{Value: "sleep 1", Shell: true}, HealthCheck: &HealthCheck{Type: HealthCheckHTTP}}
	if err := task.Validate(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("task with a check without a port: %v, want ErrInvalidArgument", err)
	}
	d := HealthCheck{Type: HealthCheckHTTP, Port: 80}.WithDefaults()
	if d.Interval != DefaultHealthInterval || d.Timeout != DefaultHealthTimeout || d.Path != "/" {
		t.Errorf("WithDefaults: %+v", d)
	}
}
