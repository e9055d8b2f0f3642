package protocol

import (
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// Version is the protocol version written into every envelope. Decode
// rejects any other version with ErrUnsupportedVersion.
const Version uint8 = 1

// MaxMessageSize is the largest payload Encode produces and Decode accepts,
// in bytes.
const MaxMessageSize = 4 << 20

// MsgType identifies the body of an envelope. Values are never renumbered
// or reused; ranges group the directions:
//
//	1-31    framework → leader requests
//	32-63   agent → leader requests
//	64-95   leader → framework events
//	96-127  leader → agent commands
//	128-159 announcements
//	160-191 replies
type MsgType uint16

// Framework → leader requests (subject allot.api.framework.<verb>).
const (
	MsgSubscribeRequest      MsgType = 1
	MsgTeardownRequest       MsgType = 2
	MsgAcceptRequest         MsgType = 3
	MsgDeclineRequest        MsgType = 4
	MsgSuppressRequest       MsgType = 5
	MsgReviveRequest         MsgType = 6
	MsgKillRequest           MsgType = 7
	MsgReconcileRequest      MsgType = 8
	MsgAcknowledgeRequest    MsgType = 9
	MsgDemandRequest         MsgType = 10
	MsgCoflowRegisterRequest MsgType = 11
	MsgStoreRequest          MsgType = 12
)

// Agent → leader requests (subject allot.api.agent.<verb>).
const (
	MsgRegisterRequest     MsgType = 32
	MsgReregisterRequest   MsgType = 33
	MsgHeartbeatRequest    MsgType = 34
	MsgStatusUpdateRequest MsgType = 35
	MsgCoflowReportRequest MsgType = 36
)

// Leader → framework events (subject allot.fw.<id>.events).
const (
	MsgOffersEvent       MsgType = 64
	MsgRescindEvent      MsgType = 65
	MsgStatusUpdateEvent MsgType = 66
	MsgShareUpdateEvent  MsgType = 67
	MsgErrorEvent        MsgType = 68
	MsgHeartbeatEvent    MsgType = 69
	MsgPreemptionEvent   MsgType = 70
	MsgAgentLostEvent    MsgType = 71
)

// Leader → agent commands (subject allot.agent.<id>.cmd).
const (
	MsgLaunchCommand            MsgType = 96
	MsgLaunchGroupCommand       MsgType = 97
	MsgKillCommand              MsgType = 98
	MsgShutdownFrameworkCommand MsgType = 99
	MsgCoflowPrioritiesCommand  MsgType = 100
	MsgAckCommand               MsgType = 101
	// MsgIngressRequest goes from agent to agent (ShuffleIngress).
	MsgIngressRequest MsgType = 102
)

// Announcements (subject allot.leader).
const (
	MsgLeaderAnnouncement MsgType = 128
	// MsgClusterEvent goes on the events subject (allot.events).
	MsgClusterEvent MsgType = 129
)

// Replies: MsgReply wraps every reply; the others are the typed result
// bodies a Reply may carry.
const (
	MsgReply             MsgType = 160
	MsgSubscribeReply    MsgType = 161
	MsgRegisterReply     MsgType = 162
	MsgStatusUpdateReply MsgType = 163
	MsgAcknowledgeReply  MsgType = 164
	MsgStoreReply        MsgType = 165
	MsgHeartbeatReply    MsgType = 166
)

// String returns the snake_case name of the type, or "msg_type(N)" for an
// unknown one.
func (t MsgType) String() string {
	if s, ok := msgTypeNames[t]; ok {
		return s
	}
	return "msg_type(" + strconv.Itoa(int(t)) + ")"
}

// Known reports whether t is a registered message type.
func (t MsgType) Known() bool {
	_, ok := msgTypeNames[t]
	return ok
}

// MsgTypes returns every registered message type in ascending order.
func MsgTypes() []MsgType {
	out := make([]MsgType, 0, len(msgTypeNames))
	for t := range MsgType(256) {
		if t.Known() {
			out = append(out, t)
		}
	}
	return out
}

// Envelope is the outer frame of every payload: the protocol version, the
// body's type and the msgpack-encoded body.
type Envelope struct {
	Version uint8              `msgpack:"v" json:"version"`
	Type    MsgType            `msgpack:"t" json:"type"`
	Body    msgpack.RawMessage `msgpack:"b" json:"body"`
}
