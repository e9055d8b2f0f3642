package protocol

import "reflect"

// message describes one message type. Every list of types in the package
// reads this table: their names, the constructors of their bodies, the
// verbs of the subjects requests go on, and requests' size caps. A new
// message is one line here (and its type constant, envelope.go).
type message struct {
	typ  MsgType
	name string
	body func() any
	// verb is a request's subject verb: a framework verb for types 1-31,
	// an agent verb for 32-63; "" for every other type.
	verb string
	// maxSize caps a request's bytes before anything is decoded (0:
	// MaxMessageSize). Each cap leaves room for the request's largest
	// valid content: the list limits of its Validate times a generous
	// size per entry.
	maxSize int
}

var messages = []message{
	{MsgSubscribeRequest, "subscribe_request", func() any { return new(SubscribeRequest) }, string(VerbSubscribe), 64 << 10},
	{MsgTeardownRequest, "teardown_request", func() any { return new(TeardownRequest) }, string(VerbTeardown), 4 << 10},
	{MsgAcceptRequest, "accept_request", func() any { return new(AcceptRequest) }, string(VerbAccept), MaxMessageSize},
	{MsgDeclineRequest, "decline_request", func() any { return new(DeclineRequest) }, string(VerbDecline), 1 << 20},
	{MsgSuppressRequest, "suppress_request", func() any { return new(SuppressRequest) }, string(VerbSuppress), 4 << 10},
	{MsgReviveRequest, "revive_request", func() any { return new(ReviveRequest) }, string(VerbRevive), MaxMessageSize},
	{MsgKillRequest, "kill_request", func() any { return new(KillRequest) }, string(VerbKill), 4 << 10},
	{MsgReconcileRequest, "reconcile_request", func() any { return new(ReconcileRequest) }, string(VerbReconcile), MaxMessageSize},
	{MsgAcknowledgeRequest, "acknowledge_request", func() any { return new(AcknowledgeRequest) }, string(VerbAcknowledge), 1 << 20},
	{MsgDemandRequest, "demand_request", func() any { return new(DemandRequest) }, string(VerbDemand), MaxMessageSize},
	{MsgCoflowRegisterRequest, "coflow_register_request", func() any { return new(CoflowRegisterRequest) }, string(VerbCoflowRegister), MaxMessageSize},
	{MsgStoreRequest, "store_request", func() any { return new(StoreRequest) }, string(VerbStore), MaxStoreValueSize + 4<<10},
	{MsgRegisterRequest, "register_request", func() any { return new(RegisterRequest) }, string(VerbRegister), 1 << 20},
	{MsgReregisterRequest, "reregister_request", func() any { return new(ReregisterRequest) }, string(VerbReregister), MaxMessageSize},
	{MsgHeartbeatRequest, "heartbeat_request", func() any { return new(HeartbeatRequest) }, string(VerbHeartbeat), 4 << 10},
	{MsgStatusUpdateRequest, "status_update_request", func() any { return new(StatusUpdateRequest) }, string(VerbStatus), MaxMessageSize},
	{MsgCoflowReportRequest, "coflow_report_request", func() any { return new(CoflowReportRequest) }, string(VerbCoflowReport), 1 << 20},
	{MsgOffersEvent, "offers_event", func() any { return new(OffersEvent) }, "", 0},
	{MsgRescindEvent, "rescind_event", func() any { return new(RescindEvent) }, "", 0},
	{MsgStatusUpdateEvent, "status_update_event", func() any { return new(StatusUpdateEvent) }, "", 0},
	{MsgShareUpdateEvent, "share_update_event", func() any { return new(ShareUpdateEvent) }, "", 0},
	{MsgErrorEvent, "error_event", func() any { return new(ErrorEvent) }, "", 0},
	{MsgHeartbeatEvent, "heartbeat_event", func() any { return new(HeartbeatEvent) }, "", 0},
	{MsgPreemptionEvent, "preemption_event", func() any { return new(PreemptionEvent) }, "", 0},
	{MsgAgentLostEvent, "agent_lost_event", func() any { return new(AgentLostEvent) }, "", 0},
	{MsgLaunchCommand, "launch_command", func() any { return new(LaunchCommand) }, "", 0},
	{MsgLaunchGroupCommand, "launch_group_command", func() any { return new(LaunchGroupCommand) }, "", 0},
	{MsgKillCommand, "kill_command", func() any { return new(KillCommand) }, "", 0},
	{MsgShutdownFrameworkCommand, "shutdown_framework_command", func() any { return new(ShutdownFrameworkCommand) }, "", 0},
	{MsgCoflowPrioritiesCommand, "coflow_priorities_command", func() any { return new(CoflowPrioritiesCommand) }, "", 0},
	{MsgAckCommand, "ack_command", func() any { return new(AckCommand) }, "", 0},
	{MsgIngressRequest, "ingress_request", func() any { return new(IngressRequest) }, "", 4 << 10},
	{MsgLeaderAnnouncement, "leader_announcement", func() any { return new(LeaderAnnouncement) }, "", 0},
	{MsgClusterEvent, "cluster_event", func() any { return new(ClusterEvent) }, "", 0},
	{MsgReply, "reply", func() any { return new(Reply) }, "", 0},
	{MsgSubscribeReply, "subscribe_reply", func() any { return new(SubscribeReply) }, "", 0},
	{MsgRegisterReply, "register_reply", func() any { return new(RegisterReply) }, "", 0},
	{MsgStatusUpdateReply, "status_update_reply", func() any { return new(StatusUpdateReply) }, "", 0},
	{MsgAcknowledgeReply, "acknowledge_reply", func() any { return new(AcknowledgeReply) }, "", 0},
	{MsgStoreReply, "store_reply", func() any { return new(StoreReply) }, "", 0},
	{MsgHeartbeatReply, "heartbeat_reply", func() any { return new(HeartbeatReply) }, "", 0},
}

// The lists derived from messages.
var (
	msgTypeNames       = map[MsgType]string{}
	registry           = map[MsgType]func() any{}
	typeByGo           = map[reflect.Type]MsgType{}
	maxRequestSize     = map[MsgType]int{}
	frameworkVerbTypes = map[FrameworkVerb]MsgType{}
	agentVerbTypes     = map[AgentVerb]MsgType{}
	verbOf             = map[MsgType]string{}
	frameworkVerbs     []FrameworkVerb
	agentVerbs         []AgentVerb
)

func init() {
	for _, m := range messages {
		msgTypeNames[m.typ], registry[m.typ] = m.name, m.body
		typeByGo[reflect.TypeOf(m.body()).Elem()] = m.typ
		if m.maxSize > 0 {
			maxRequestSize[m.typ] = m.maxSize
		}
		switch {
		case m.verb == "":
		case m.typ < 32:
			frameworkVerbTypes[FrameworkVerb(m.verb)] = m.typ
			frameworkVerbs = append(frameworkVerbs, FrameworkVerb(m.verb))
			verbOf[m.typ] = m.verb
		default:
			agentVerbTypes[AgentVerb(m.verb)] = m.typ
			agentVerbs = append(agentVerbs, AgentVerb(m.verb))
			verbOf[m.typ] = m.verb
		}
	}
}
