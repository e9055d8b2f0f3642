package protocol

import "reflect"

// registry maps every message type to a constructor of its body.
var registry = map[MsgType]func() any{
	MsgSubscribeRequest:         func() any { return new(SubscribeRequest) },
	MsgTeardownRequest:          func() any { return new(TeardownRequest) },
	MsgAcceptRequest:            func() any { return new(AcceptRequest) },
	MsgDeclineRequest:           func() any { return new(DeclineRequest) },
	MsgSuppressRequest:          func() any { return new(SuppressRequest) },
	MsgReviveRequest:            func() any { return new(ReviveRequest) },
	MsgKillRequest:              func() any { return new(KillRequest) },
	MsgReconcileRequest:         func() any { return new(ReconcileRequest) },
	MsgAcknowledgeRequest:       func() any { return new(AcknowledgeRequest) },
	MsgDemandRequest:            func() any { return new(DemandRequest) },
	MsgCoflowRegisterRequest:    func() any { return new(CoflowRegisterRequest) },
	MsgStoreRequest:             func() any { return new(StoreRequest) },
	MsgRegisterRequest:          func() any { return new(RegisterRequest) },
	MsgReregisterRequest:        func() any { return new(ReregisterRequest) },
	MsgHeartbeatRequest:         func() any { return new(HeartbeatRequest) },
	MsgStatusUpdateRequest:      func() any { return new(StatusUpdateRequest) },
	MsgCoflowReportRequest:      func() any { return new(CoflowReportRequest) },
	MsgOffersEvent:              func() any { return new(OffersEvent) },
	MsgRescindEvent:             func() any { return new(RescindEvent) },
	MsgStatusUpdateEvent:        func() any { return new(StatusUpdateEvent) },
	MsgShareUpdateEvent:         func() any { return new(ShareUpdateEvent) },
	MsgErrorEvent:               func() any { return new(ErrorEvent) },
	MsgHeartbeatEvent:           func() any { return new(HeartbeatEvent) },
	MsgPreemptionEvent:          func() any { return new(PreemptionEvent) },
	MsgLaunchCommand:            func() any { return new(LaunchCommand) },
	MsgLaunchGroupCommand:       func() any { return new(LaunchGroupCommand) },
	MsgKillCommand:              func() any { return new(KillCommand) },
	MsgShutdownFrameworkCommand: func() any { return new(ShutdownFrameworkCommand) },
	MsgCoflowPrioritiesCommand:  func() any { return new(CoflowPrioritiesCommand) },
	MsgAckCommand:               func() any { return new(AckCommand) },
	MsgLeaderAnnouncement:       func() any { return new(LeaderAnnouncement) },
	MsgClusterEvent:             func() any { return new(ClusterEvent) },
	MsgReply:                    func() any { return new(Reply) },
	MsgSubscribeReply:           func() any { return new(SubscribeReply) },
	MsgRegisterReply:            func() any { return new(RegisterReply) },
	MsgStatusUpdateReply:        func() any { return new(StatusUpdateReply) },
	MsgAcknowledgeReply:         func() any { return new(AcknowledgeReply) },
	MsgStoreReply:               func() any { return new(StoreReply) },
}

// typeByGo maps each body struct type to its message type.
var typeByGo = func() map[reflect.Type]MsgType {
	m := make(map[reflect.Type]MsgType, len(registry))
	for t, f := range registry {
		m[reflect.TypeOf(f()).Elem()] = t
	}
	return m
}()

// NewBody returns a pointer to a zero value of the struct that type t
// carries, e.g. *AcceptRequest for MsgAcceptRequest, or false when t is not
// a known type.
func NewBody(t MsgType) (any, bool) {
	f, ok := registry[t]
	if !ok {
		return nil, false
	}
	return f(), true
}

// TypeOf returns the message type whose body is body's struct type; body
// may be the struct or a pointer to it. It returns false for anything else.
func TypeOf(body any) (MsgType, bool) {
	rt := reflect.TypeOf(body)
	if rt == nil {
		return 0, false
	}
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	t, ok := typeByGo[rt]
	return t, ok
}
