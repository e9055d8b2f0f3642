package master

// Who may call what. The NATS servers authenticate every connection and let
// it publish only on its own principal's API subjects (package natsauth), so
// the principal a subject names is the caller's. The leader takes the
// caller from the subject (caller.go) and checks, before decoding the body,
// that the framework or agent the subject names is that principal's; a
// subscribe records the principal, which a resubscribe may not change, and
// an agent keeps the credential it registered with.

// clipText shortens text from a request for an error message.
func clipText(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
