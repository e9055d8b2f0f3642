package protocol

// Request size caps, checked by the leader on a request's bytes before it
// decodes anything, so that a small call cannot be made to cost what the
// largest message may (MaxMessageSize). Each cap leaves room for the
// request's largest valid content: the list limits of its Validate times
// a generous size per entry.
var maxRequestSize = map[MsgType]int{
	MsgSubscribeRequest:      64 << 10,
	MsgTeardownRequest:       4 << 10,
	MsgAcceptRequest:         MaxMessageSize, // up to MaxTasksPerAccept tasks
	MsgDeclineRequest:        1 << 20,        // up to MaxOffersPerRequest offer IDs
	MsgSuppressRequest:       4 << 10,
	MsgReviveRequest:         MaxMessageSize, // refusals, one per agent
	MsgKillRequest:           4 << 10,
	MsgReconcileRequest:      MaxMessageSize,
	MsgAcknowledgeRequest:    1 << 20, // up to MaxStatusBatch acknowledgements
	MsgDemandRequest:         MaxMessageSize,
	MsgCoflowRegisterRequest: MaxMessageSize,
	MsgStoreRequest:          MaxStoreValueSize + 4<<10,
	MsgRegisterRequest:       1 << 20,
	MsgReregisterRequest:     MaxMessageSize,
	MsgHeartbeatRequest:      4 << 10,
	MsgStatusUpdateRequest:   MaxMessageSize,
	MsgCoflowReportRequest:   1 << 20,
}

// MaxRequestSize is the largest request of type t the leader decodes, in
// bytes: a cap per request type, MaxMessageSize for other types.
func MaxRequestSize(t MsgType) int {
	if n, ok := maxRequestSize[t]; ok {
		return n
	}
	return MaxMessageSize
}
