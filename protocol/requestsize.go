package protocol

// MaxRequestSize is the largest request of type t the leader decodes, in
// bytes: a cap per request type, MaxMessageSize for other types.
func MaxRequestSize(t MsgType) int {
	if n, ok := maxRequestSize[t]; ok {
		return n
	}
	return MaxMessageSize
}
