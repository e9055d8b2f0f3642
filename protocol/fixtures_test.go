package protocol

import (
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Fixtures shared by the codec, reply and fuzz tests: one fully populated
// value per message type.

func ptr[T any](v T) *T { return &v }

func sampleResources() Resources {
	return Resources{
		Scalars: map[string]int64{ResCPUs: 1500, ResMem: 2048},
		Ranges:  map[string]Ranges{ResPorts: {{Begin: 31000, End: 31009}}},
	}
}

func sampleAttributes() Attributes {
	return Attributes{
		"rack":     Text("r3"),
		"net_gbps": Number(25),
		"features": Set("avx", "sse4"),
		"kernel":   Text("6.1.0"),
	}
}

func sampleConstraints() []Constraint {
	return []Constraint{
		{Attribute: "rack", Op: OpIn, Values: []string{"r1", "r3"}},
		{Attribute: "kernel", Op: OpGe, Value: "5.15", Soft: true},
		{Attribute: "rack", Op: OpMaxPer, N: 2},
	}
}

func sampleTask(id TaskID) TaskInfo {
	return TaskInfo{
		TaskID:    id,
		Name:      "map-" + string(id),
		AgentID:   "ag-1",
		Resources: sampleResources(),
		Command: CommandInfo{
			Value: "/bin/mapper",
			Args:  []string{"--split", "3"},
			Env:   map[string]string{"HOME": "/tmp"},
			URIs: []URI{{
				Value:      "https://example.com/job.tar.gz",
				Sha256:     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
				Executable: true, Extract: true, OutputFile: "job.tar.gz",
			}},
			User: "nobody",
		},
		Constraints:     sampleConstraints(),
		Kind:            OfferLeftover,
		Labels:          map[string]string{"job": "wordcount"},
		KillGracePeriod: 3 * time.Second,
		GroupID:         "g-1",
	}
}

func sampleStatus() TaskStatus {
	return TaskStatus{
		TaskID: "t-1", FrameworkID: "fw-1", AgentID: "ag-1", State: TaskFailed,
		Reason: ReasonCommandFailed, Message: "exit 2", ExitCode: ptr(2),
		Timestamp: 1_700_000_000_000_000_000, UUID: "st-1", Healthy: ptr(false), MemPeakMiB: 61,
	}
}

func sampleUpdate() StatusUpdate { return StatusUpdate{Status: sampleStatus(), UUID: "st-1"} }

// sampleBodies returns one populated value per registered message type.
func sampleBodies() map[MsgType]any {
	replyBody, err := encodeBody(MsgSubscribeReply, SubscribeReply{FrameworkID: "fw-1", LeaderID: "m1", HeartbeatInterval: time.Second})
	if err != nil {
		panic(err)
	}
	return map[MsgType]any{
		MsgSubscribeRequest: sampleSubscribe(),
		MsgTeardownRequest:  TeardownRequest{FrameworkID: "fw-1"},
		MsgAcceptRequest: AcceptRequest{
			FrameworkID: "fw-1", OfferIDs: []OfferID{"of-1", "of-2"},
			Operations: []Operation{
				{Type: OperationLaunch, Tasks: []TaskInfo{sampleTask("t-1")}},
				{Type: OperationLaunchGroup, GroupID: "g-1", Tasks: []TaskInfo{sampleTask("t-2"), sampleTask("t-3")}},
			},
			Filters: &Filters{RefuseSeconds: 7.5},
		},
		MsgDeclineRequest:  DeclineRequest{FrameworkID: "fw-1", OfferIDs: []OfferID{"of-3"}, Filters: &Filters{}, Leftover: true},
		MsgSuppressRequest: SuppressRequest{FrameworkID: "fw-1"},
		MsgReviveRequest:   ReviveRequest{FrameworkID: "fw-1"},
		MsgKillRequest:     KillRequest{FrameworkID: "fw-1", TaskID: "t-1", AgentID: "ag-1", GracePeriod: time.Second},
		MsgReconcileRequest: ReconcileRequest{FrameworkID: "fw-1", Tasks: []ReconcileTask{
			{TaskID: "t-1", AgentID: "ag-1"}, {TaskID: "t-2"},
		}},
		MsgAcknowledgeRequest: AcknowledgeRequest{FrameworkID: "fw-1", Acks: []Acknowledgement{{AgentID: "ag-1", TaskID: "t-1", UUID: "st-1"}, {TaskID: "t-2", UUID: "st-2"}}},
		MsgDemandRequest: DemandRequest{
			FrameworkID:   "fw-1",
			Demand:        []TaskShape{{Resources: Scalars(map[string]int64{ResCPUs: 1000}), Ports: 2, Count: 40, Constraints: sampleConstraints()}},
			MustStart:     []TaskShape{{Resources: Scalars(map[string]int64{ResCPUs: 1000}), Count: 10}},
			Optional:      []TaskShape{{Resources: Scalars(map[string]int64{ResMem: 512}), Count: 5}},
			RemainingWork: 1234.5,
		},
		MsgCoflowRegisterRequest: CoflowRegisterRequest{FrameworkID: "fw-1", CoflowID: "shuffle-1", Flows: []FlowSpec{
			{Src: "ag-1", Dst: "ag-2", Bytes: 1 << 30}, {Src: "ag-2", Dst: "ag-1", Transfers: 3},
		}},
		MsgRegisterRequest: RegisterRequest{
			Hostname: "node1", Addresses: Addresses{HTTP: "10.0.0.1:5051"},
			Resources: sampleResources(), Attributes: sampleAttributes(), Version: "0.1.0",
		},
		MsgReregisterRequest: ReregisterRequest{
			AgentID: "ag-1", Hostname: "node1", Addresses: Addresses{HTTP: "10.0.0.1:5051"},
			Resources: sampleResources(), Attributes: sampleAttributes(), Version: "0.1.0",
			Tasks: []TaskStatus{sampleStatus()}, Unacked: []StatusUpdate{sampleUpdate()},
		},
		MsgHeartbeatRequest:    HeartbeatRequest{AgentID: "ag-1"},
		MsgStatusUpdateRequest: StatusUpdateRequest{AgentID: "ag-1", Updates: []StatusUpdate{sampleUpdate()}},
		MsgCoflowReportRequest: CoflowReportRequest{AgentID: "ag-1", Flows: []FlowProgress{
			{FrameworkID: "fw-1", CoflowID: "shuffle-1", Src: "ag-1", Dst: "ag-2", BytesSent: 4096, Transfers: 2, Done: true},
		}},
		MsgOffersEvent: OffersEvent{Offers: []Offer{{
			ID: "of-1", FrameworkID: "fw-1", AgentID: "ag-1", Hostname: "node1",
			Resources: sampleResources(), Attributes: sampleAttributes(), Kind: OfferFair,
			ExpiresAt: 1_700_000_030_000_000_000,
		}}},
		MsgRescindEvent:      RescindEvent{OfferID: "of-1", Reason: "agent lost"},
		MsgStatusUpdateEvent: StatusUpdateEvent{Status: sampleStatus(), UUID: "st-1"},
		MsgShareUpdateEvent: ShareUpdateEvent{
			Role: "eng/prod", DominantShare: 0.25,
			Shares:    map[string]float64{ResCPUs: 0.25, ResMem: 0.125},
			FairShare: map[string]int64{ResCPUs: 4000, ResMem: 8192},
		},
		MsgErrorEvent:      ErrorEvent{Error: Error{Code: CodeUnknownFramework, Message: "framework fw-1 removed"}},
		MsgHeartbeatEvent:  HeartbeatEvent{Seq: 42},
		MsgPreemptionEvent: PreemptionEvent{Tasks: []PreemptedTask{{TaskID: "t1", AgentID: "a1", Reason: ReasonPreempted, Resources: Resources{Scalars: map[string]int64{ResCPUs: 1000}}}}, Deadline: 1700000000000000000},
		MsgAgentLostEvent:  AgentLostEvent{AgentID: "ag-1", Hostname: "host-1", State: "unreachable"},
		MsgLaunchCommand:   LaunchCommand{FrameworkID: "fw-1", Tasks: []TaskInfo{sampleTask("t-1")}},
		MsgLaunchGroupCommand: LaunchGroupCommand{
			FrameworkID: "fw-1", GroupID: "g-1", Tasks: []TaskInfo{sampleTask("t-2"), sampleTask("t-3")},
		},
		MsgKillCommand:              KillCommand{FrameworkID: "fw-1", TaskID: "t-1", GracePeriod: 2 * time.Second},
		MsgShutdownFrameworkCommand: ShutdownFrameworkCommand{FrameworkID: "fw-1"},
		MsgCoflowPrioritiesCommand: CoflowPrioritiesCommand{Priorities: []CoflowPriority{
			{FrameworkID: "fw-1", CoflowID: "shuffle-1", Dst: "ag-2", Rank: 0, Queue: -1}, {FrameworkID: "fw-1", CoflowID: "shuffle-2", Rank: 1, Queue: 3},
		}, Ingress: []CoflowPriority{{FrameworkID: "fw-1", CoflowID: "shuffle-3", Src: "ag-3", Rank: 0, Queue: 2}}},
		MsgIngressRequest: IngressRequest{FrameworkID: "fw-1", CoflowID: "cf-1", Src: "ag-1", Dst: "ag-2",
			Transfer: 7, Bytes: 256 << 10},
		MsgAckCommand: AckCommand{Acks: []StatusAck{{FrameworkID: "fw-1", TaskID: "t-1", UUID: "st-1"}}},
		MsgLeaderAnnouncement: LeaderAnnouncement{
			ID: "m1", Term: 7, HTTPAddr: "10.0.0.1:5050", NATSURLs: []string{"nats://10.0.0.1:4222"},
		},
		MsgClusterEvent: ClusterEvent{Type: ClusterEventAgent, Time: 1700000000000000000,
			Agent: &AgentChange{AgentID: "ag-1", Hostname: "host-1", State: "draining"}},
		MsgReply:          Reply{Type: MsgSubscribeReply, Body: msgpack.RawMessage(replyBody)},
		MsgSubscribeReply: SubscribeReply{FrameworkID: "fw-1", LeaderID: "m1", HeartbeatInterval: time.Second},
		MsgRegisterReply:  RegisterReply{AgentID: "ag-1", HeartbeatInterval: time.Second},
		MsgHeartbeatReply: HeartbeatReply{HeartbeatInterval: 5 * time.Second},
		MsgStatusUpdateReply: StatusUpdateReply{Refused: []Refusal{
			{TaskID: "t-1", UUID: "st-1", Error: &Error{Code: CodeUnknownTask, Message: "task t-1 unknown"}},
		}},
		MsgAcknowledgeReply: AcknowledgeReply{Refused: []Refusal{
			{TaskID: "t-1", UUID: "st-1", Error: &Error{Code: CodeUnknownTask, Message: "task t-1 unknown"}},
		}},
		MsgStoreRequest: StoreRequest{Op: StorePut, Key: "jobs/web", Value: []byte("job"), IfRevision: 7},
		MsgStoreReply: StoreReply{Found: true, Item: StoreItem{Key: "jobs/web", Value: []byte("job"), Revision: 9},
			Items: []StoreItem{{Key: "jobs/a", Value: []byte("a"), Revision: 3}}, More: true},
	}
}

// sampleSubscribe is the sample subscribe: a framework subscribing again
// with its state.
func sampleSubscribe() SubscribeRequest {
	return SubscribeRequest{
		FrameworkID: "fw-1", Name: "wordcount", Principal: "alice", Role: "eng/prod",
		FailoverTimeout: time.Minute, Capabilities: []string{CapAltruistic, CapGang},
		Suppressed: true, Weight: 2.5,
		Resume: &SubscribeResume{
			Demand:   &DemandRequest{FrameworkID: "fw-1", Demand: []TaskShape{{Resources: Resources{Scalars: map[string]int64{ResCPUs: 1000}}, Count: 3}}},
			Refusals: []AgentRefusal{{AgentID: "ag-1", Seconds: 5}},
		},
	}
}
