package protocol

// TokenHeader is the transport header that carries a framework's
// credential: the secret of its principal, sent with every framework call
// when the masters authenticate frameworks. A call whose token is not the
// secret of the principal it acts as (the subscribe's principal, or the
// principal the framework registered with) is refused with ErrUnauthorized.
// Like any bearer token it should travel over TLS when the network is not
// trusted.
const TokenHeader = "Allot-Token"
