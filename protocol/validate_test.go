package protocol

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

type validator interface{ Validate() error }

func sample[T any](mt MsgType) T { return sampleBodies()[mt].(T) }

func TestValidate_requests(t *testing.T) {
	t.Parallel()
	tests := append(frameworkValidateCases(), agentValidateCases()...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.v.Validate()
			if tc.want == nil {
				if err != nil {
					t.Errorf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// validateCase is a request and the error its Validate must wrap.
type validateCase struct {
	name string
	v    validator
	want error // nil: valid
}

// manyTasks is n sample tasks, numbered from from.
func manyTasks(from, n int) []TaskInfo {
	out := make([]TaskInfo, n)
	for i := range out {
		out[i] = sampleTask(TaskID("t-" + strconv.Itoa(from+i)))
	}
	return out
}

// subscribeValidateCases are TestValidate_requests' cases of subscribes.
func subscribeValidateCases() []validateCase {
	return []validateCase{
		{"subscribe new", func() validator {
			r := sample[SubscribeRequest](MsgSubscribeRequest)
			r.FrameworkID, r.Resume = "", nil
			return r
		}(), nil},
		{"subscribe no name", func() validator { r := sample[SubscribeRequest](MsgSubscribeRequest); r.Name = ""; return r }(), ErrInvalidArgument},
		{"subscribe bad role", func() validator { r := sample[SubscribeRequest](MsgSubscribeRequest); r.Role = "eng//x"; return r }(), ErrInvalidArgument},
		{"subscribe bad id", func() validator { r := sample[SubscribeRequest](MsgSubscribeRequest); r.FrameworkID = "a b"; return r }(), ErrInvalidArgument},
		{"subscribe negative failover", func() validator { r := sample[SubscribeRequest](MsgSubscribeRequest); r.FailoverTimeout = -1; return r }(), ErrInvalidArgument},
		{"subscribe NaN weight", func() validator { r := sample[SubscribeRequest](MsgSubscribeRequest); r.Weight = math.NaN(); return r }(), ErrInvalidArgument},
		{"subscribe inf weight", func() validator { r := sample[SubscribeRequest](MsgSubscribeRequest); r.Weight = math.Inf(1); return r }(), ErrInvalidArgument},
		{"subscribe empty capability", func() validator {
			r := sample[SubscribeRequest](MsgSubscribeRequest)
			r.Capabilities = []string{""}
			return r
		}(), ErrInvalidArgument},
		{"subscribe new resuming", func() validator { r := sample[SubscribeRequest](MsgSubscribeRequest); r.FrameworkID = ""; return r }(), ErrInvalidArgument},
		{"subscribe resume without demand", func() validator {
			r := sample[SubscribeRequest](MsgSubscribeRequest)
			r.Resume = &SubscribeResume{}
			return r
		}(), nil},
		{"subscribe resuming another's demand", func() validator {
			r := sample[SubscribeRequest](MsgSubscribeRequest)
			r.Resume = &SubscribeResume{Demand: &DemandRequest{FrameworkID: "fw-2"}}
			return r
		}(), ErrInvalidArgument},
		{"subscribe resuming a bad demand", func() validator {
			r := sample[SubscribeRequest](MsgSubscribeRequest)
			r.Resume = &SubscribeResume{Demand: &DemandRequest{FrameworkID: "fw-1", Demand: []TaskShape{{Count: -1}}}}
			return r
		}(), ErrInvalidArgument},
		{"subscribe resuming a bad refusal", func() validator {
			r := sample[SubscribeRequest](MsgSubscribeRequest)
			r.Resume = &SubscribeResume{Refusals: []AgentRefusal{{AgentID: "ag-1", Seconds: -1}}}
			return r
		}(), ErrInvalidArgument},
		{"subscribe resuming too many refusals", func() validator {
			r := sample[SubscribeRequest](MsgSubscribeRequest)
			r.Resume = &SubscribeResume{Refusals: make([]AgentRefusal, MaxListLen+1)}
			return r
		}(), ErrInvalidArgument},
	}
}

// frameworkValidateCases are TestValidate_requests' cases of the requests
// a framework sends.
func frameworkValidateCases() []validateCase {
	return append(subscribeValidateCases(), []validateCase{
		{"teardown", TeardownRequest{FrameworkID: "fw-1"}, nil},
		{"teardown empty", TeardownRequest{}, ErrInvalidArgument},
		{"suppress empty", SuppressRequest{}, ErrInvalidArgument},
		{"revive empty", ReviveRequest{}, ErrInvalidArgument},
		{"accept no ops declines", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}}, nil},
		{"accept no offers", AcceptRequest{FrameworkID: "fw-1"}, ErrInvalidArgument},
		{"accept duplicate offer", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1", "of-1"}}, ErrDuplicate},
		{"accept too many offers", AcceptRequest{FrameworkID: "fw-1", OfferIDs: make([]OfferID, MaxOffersPerRequest+1)}, ErrInvalidArgument},
		{"accept duplicate task", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Operations: []Operation{
			{Type: OperationLaunch, Tasks: []TaskInfo{sampleTask("t-1")}},
			{Type: OperationLaunch, Tasks: []TaskInfo{sampleTask("t-1")}},
		}}, ErrDuplicate},
		{"accept max tasks", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Operations: []Operation{
			{Type: OperationLaunch, Tasks: manyTasks(0, MaxTasksPerAccept)},
		}}, nil},
		{"accept too many tasks", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Operations: []Operation{
			{Type: OperationLaunch, Tasks: manyTasks(0, MaxTasksPerAccept/2)},
			{Type: OperationLaunch, Tasks: manyTasks(MaxTasksPerAccept/2, MaxTasksPerAccept/2+1)},
		}}, ErrInvalidArgument},
		{"accept unknown op", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Operations: []Operation{
			{Type: "reserve", Tasks: []TaskInfo{sampleTask("t-1")}},
		}}, ErrInvalidArgument},
		{"accept empty op", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Operations: []Operation{{Type: OperationLaunch}}}, ErrInvalidArgument},
		{"accept group without id", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Operations: []Operation{
			{Type: OperationLaunchGroup, Tasks: []TaskInfo{sampleTask("t-1")}},
		}}, ErrInvalidArgument},
		{"accept group mismatch", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Operations: []Operation{
			{Type: OperationLaunchGroup, GroupID: "g-2", Tasks: []TaskInfo{sampleTask("t-1")}},
		}}, ErrInvalidArgument},
		{"accept bad filter", AcceptRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Filters: &Filters{RefuseSeconds: -1}}, ErrInvalidArgument},
		{"decline huge filter", DeclineRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Filters: &Filters{RefuseSeconds: MaxRefuseSeconds + 1}}, ErrInvalidArgument},
		{"decline NaN filter", DeclineRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1"}, Filters: &Filters{RefuseSeconds: math.NaN()}}, ErrInvalidArgument},
		{"decline bad offer id", DeclineRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of 1"}}, ErrInvalidArgument},
		{"kill", KillRequest{FrameworkID: "fw-1", TaskID: "t-1"}, nil},
		{"kill no task", KillRequest{FrameworkID: "fw-1"}, ErrInvalidArgument},
		{"kill negative grace", KillRequest{FrameworkID: "fw-1", TaskID: "t-1", GracePeriod: -1}, ErrInvalidArgument},
		{"reconcile implicit", ReconcileRequest{FrameworkID: "fw-1"}, nil},
		{"reconcile bad task", ReconcileRequest{FrameworkID: "fw-1", Tasks: []ReconcileTask{{}}}, ErrInvalidArgument},
		{"reconcile too many", ReconcileRequest{FrameworkID: "fw-1", Tasks: make([]ReconcileTask, MaxListLen+1)}, ErrInvalidArgument},
		{"acknowledge no uuid", AcknowledgeRequest{FrameworkID: "fw-1", Acks: []Acknowledgement{{AgentID: "ag-1", TaskID: "t-1"}}}, ErrInvalidArgument},
		{"acknowledge empty", AcknowledgeRequest{FrameworkID: "fw-1"}, ErrInvalidArgument},
		{"acknowledge too many", AcknowledgeRequest{FrameworkID: "fw-1", Acks: make([]Acknowledgement, MaxStatusBatch+1)}, ErrInvalidArgument},
		{"demand empty", DemandRequest{FrameworkID: "fw-1"}, nil},
		{"demand negative count", DemandRequest{FrameworkID: "fw-1", MustStart: []TaskShape{{Count: -1}}}, ErrInvalidArgument},
		{"demand negative ports", DemandRequest{FrameworkID: "fw-1", Optional: []TaskShape{{Ports: -1}}}, ErrInvalidArgument},
		{"demand bad resources", DemandRequest{FrameworkID: "fw-1", Demand: []TaskShape{{Resources: Scalars(map[string]int64{ResCPUs: -5})}}}, ErrInvalidResources},
		{"demand bad constraint", DemandRequest{FrameworkID: "fw-1", Demand: []TaskShape{{Constraints: []Constraint{{Attribute: "x", Op: "?"}}}}}, ErrInvalidConstraint},
		{"demand NaN work", DemandRequest{FrameworkID: "fw-1", RemainingWork: math.NaN()}, ErrInvalidArgument},
		{"coflow no flows", CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "c1"}, ErrInvalidArgument},
		{"coflow negative bytes", CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "c1", Flows: []FlowSpec{{Src: "a", Dst: "b", Bytes: -1}}}, ErrInvalidArgument},
		{"coflow bad dst", CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "c1", Flows: []FlowSpec{{Src: "a"}}}, ErrInvalidArgument},
		{"coflow withdrawn with flows", CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "c1", Withdraw: true, Flows: []FlowSpec{{Src: "a", Dst: "b", Transfers: 1}}}, ErrInvalidArgument},
		{"coflow flow without size", CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "c1", Flows: []FlowSpec{{Src: "a", Dst: "b"}}}, ErrInvalidArgument},
		{"coflow negative transfers", CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "c1", Flows: []FlowSpec{{Src: "a", Dst: "b", Transfers: -1}}}, ErrInvalidArgument},
		{"coflow flow twice", CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "c1", Flows: []FlowSpec{{Src: "a", Dst: "b", Transfers: 1}, {Src: "a", Dst: "b", Bytes: 9}}}, ErrInvalidArgument},
		{"coflow report without framework", CoflowReportRequest{AgentID: "ag-1", Flows: []FlowProgress{{CoflowID: "c1", Src: "a", Dst: "b"}}}, ErrInvalidArgument},
	}...)
}

// agentValidateCases are TestValidate_requests' cases of the requests an
// agent sends and of the master's commands to agents.
func agentValidateCases() []validateCase {
	return []validateCase{
		{"register no host", func() validator { r := sample[RegisterRequest](MsgRegisterRequest); r.Hostname = ""; return r }(), ErrInvalidArgument},
		{"register bad resources", func() validator {
			r := sample[RegisterRequest](MsgRegisterRequest)
			r.Resources = Resources{Ranges: map[string]Ranges{ResPorts: rs(9, 1)}}
			return r
		}(), ErrInvalidResources},
		{"register bad attribute kind", func() validator {
			r := sample[RegisterRequest](MsgRegisterRequest)
			r.Attributes = Attributes{"x": {Kind: 9}}
			return r
		}(), ErrInvalidArgument},
		{"reregister no id", func() validator { r := sample[ReregisterRequest](MsgReregisterRequest); r.AgentID = ""; return r }(), ErrInvalidArgument},
		{"reregister bad state", func() validator {
			r := sample[ReregisterRequest](MsgReregisterRequest)
			r.Tasks = []TaskStatus{{TaskID: "t", FrameworkID: "f", State: "RUNNING?"}}
			return r
		}(), ErrInvalidArgument},
		{"heartbeat empty", HeartbeatRequest{}, ErrInvalidArgument},
		{"status other agent", func() validator {
			r := sample[StatusUpdateRequest](MsgStatusUpdateRequest)
			r.AgentID = "ag-2"
			return r
		}(), ErrInvalidArgument},
		{"status uuid mismatch", func() validator {
			r := sample[StatusUpdateRequest](MsgStatusUpdateRequest)
			r.Updates[0].UUID = "st-2"
			return r
		}(), ErrInvalidArgument},
		{"status empty batch", StatusUpdateRequest{AgentID: "ag-1"}, ErrInvalidArgument},
		{"status batch too large", StatusUpdateRequest{AgentID: "ag-1", Updates: make([]StatusUpdate, MaxStatusBatch+1)}, ErrInvalidArgument},
		{"status no uuid", func() validator {
			r := sample[StatusUpdateRequest](MsgStatusUpdateRequest)
			r.Updates[0].UUID, r.Updates[0].Status.UUID = "", ""
			return r
		}(), ErrInvalidArgument},
		{"status huge message", func() validator {
			r := sample[StatusUpdateRequest](MsgStatusUpdateRequest)
			r.Updates[0].Status.Message = strings.Repeat("x", MaxTextLen+1)
			return r
		}(), ErrInvalidArgument},
		{"status negative memory peak", func() validator {
			r := sample[StatusUpdateRequest](MsgStatusUpdateRequest)
			r.Updates[0].Status.MemPeakMiB = -1
			return r
		}(), ErrInvalidArgument},
		{"coflow report negative", CoflowReportRequest{AgentID: "ag-1", Flows: []FlowProgress{{CoflowID: "c", Src: "a", Dst: "b", BytesSent: -1}}}, ErrInvalidArgument},
		{"launch empty", LaunchCommand{FrameworkID: "fw-1"}, ErrInvalidArgument},
		{"launch group mismatch", LaunchGroupCommand{FrameworkID: "fw-1", GroupID: "g-9", Tasks: []TaskInfo{sampleTask("t-1")}}, ErrInvalidArgument},
		{"kill command", KillCommand{FrameworkID: "fw-1", TaskID: "t-1"}, nil},
	}
}

func TestTaskInfo_Validate(t *testing.T) {
	t.Parallel()
	mod := func(f func(*TaskInfo)) TaskInfo { ti := sampleTask("t-1"); f(&ti); return ti }
	tests := []struct {
		name string
		t    TaskInfo
		want error
	}{
		{"sample", sampleTask("t-1"), nil},
		{"shell", mod(func(t *TaskInfo) { t.Command = CommandInfo{Shell: true, Value: "echo hi | wc"} }), nil},
		{"no id", mod(func(t *TaskInfo) { t.TaskID = "" }), ErrInvalidArgument},
		{"no agent", mod(func(t *TaskInfo) { t.AgentID = "" }), ErrInvalidArgument},
		{"no resources", mod(func(t *TaskInfo) { t.Resources = Resources{} }), ErrInvalidResources},
		{"negative resources", mod(func(t *TaskInfo) { t.Resources.Scalars[ResMem] = -1 }), ErrInvalidResources},
		{"no command", mod(func(t *TaskInfo) { t.Command.Value = "" }), ErrInvalidArgument},
		{"NUL in arg", mod(func(t *TaskInfo) { t.Command.Args = []string{"a\x00b"} }), ErrInvalidArgument},
		{"env key with =", mod(func(t *TaskInfo) { t.Command.Env = map[string]string{"A=B": "1"} }), ErrInvalidArgument},
		{"empty env key", mod(func(t *TaskInfo) { t.Command.Env = map[string]string{"": "1"} }), ErrInvalidArgument},
		{"bad sha", mod(func(t *TaskInfo) { t.Command.URIs[0].Sha256 = "abc" }), ErrInvalidArgument},
		{"output escapes", mod(func(t *TaskInfo) { t.Command.URIs[0].OutputFile = "../../etc/passwd" }), ErrInvalidArgument},
		{"output absolute", mod(func(t *TaskInfo) { t.Command.URIs[0].OutputFile = "/etc/passwd" }), ErrInvalidArgument},
		{"output subdir ok", mod(func(t *TaskInfo) { t.Command.URIs[0].OutputFile = "bin/tool" }), nil},
		{"empty uri", mod(func(t *TaskInfo) { t.Command.URIs[0].Value = "" }), ErrInvalidArgument},
		{"bad constraint", mod(func(t *TaskInfo) { t.Constraints = []Constraint{{Attribute: "r", Op: OpIn}} }), ErrInvalidConstraint},
		{"too many constraints", mod(func(t *TaskInfo) {
			t.Constraints = make([]Constraint, MaxConstraints+1)
		}), ErrInvalidArgument},
		{"bad kind", mod(func(t *TaskInfo) { t.Kind = "spot" }), ErrInvalidArgument},
		{"negative grace", mod(func(t *TaskInfo) { t.KillGracePeriod = -1 }), ErrInvalidArgument},
		{"bad group", mod(func(t *TaskInfo) { t.GroupID = "g 1" }), ErrInvalidArgument},
		{"long name", mod(func(t *TaskInfo) { t.Name = strings.Repeat("n", MaxNameLen+1) }), ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.t.Validate()
			if tc.want == nil {
				if err != nil {
					t.Errorf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTaskState_Terminal(t *testing.T) {
	t.Parallel()
	terminal := map[TaskState]bool{
		TaskFinished: true, TaskFailed: true, TaskKilled: true, TaskError: true, TaskLost: true, TaskDropped: true,
	}
	for _, s := range TaskStates() {
		if got := s.Terminal(); got != terminal[s] {
			t.Errorf("%s.Terminal(): got %v, want %v", s, got, terminal[s])
		}
		if !s.Valid() {
			t.Errorf("%s.Valid(): got false, want true", s)
		}
	}
	if len(TaskStates()) != 11 {
		t.Errorf("got %d states, want 11", len(TaskStates()))
	}
	for _, s := range []TaskState{"", "running", "GONE"} {
		if s.Valid() || s.Terminal() {
			t.Errorf("%q: got valid or terminal, want neither", s)
		}
	}
}

func TestOfferKind_Valid(t *testing.T) {
	t.Parallel()
	if !OfferFair.Valid() || !OfferLeftover.Valid() || OfferKind("").Valid() || OfferKind("spot").Valid() {
		t.Errorf("got wrong validity for offer kinds")
	}
}
