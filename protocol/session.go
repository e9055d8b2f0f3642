package protocol

import "strconv"

// SessionHeader is the transport header that carries a framework session:
// the SDK sets it on every framework call after its subscribe, and the
// leader on every event it sends a framework. A framework has one session
// at a time, and it changes only when another scheduler takes the framework
// over (SubscribeRequest.Session 0). The leader refuses a call whose session
// is not the framework's with ErrFailedOver, so a scheduler that was taken
// over can no longer act; and a scheduler that sees an event of a newer
// session knows it was taken over. Calls without the header (clients that
// do not track sessions) are not fenced.
const SessionHeader = "Allot-Session"

// FormatSession is the header value of session.
func FormatSession(session uint64) string { return strconv.FormatUint(session, 10) }

// ParseSession reads a header value; false when it is empty or not a
// positive number.
func ParseSession(v string) (uint64, bool) {
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}
