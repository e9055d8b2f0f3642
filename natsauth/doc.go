// Package natsauth decides who may connect to a cluster's NATS servers and
// what each connection may publish and subscribe.
//
// Every connection is one protocol.Identity: a master, an agent
// credential, a framework principal or an operator. It proves who it is
// with a verified client certificate naming the identity in a URI subject
// alternative name (allot:framework.analytics), or with the user name
// "<kind>.<name>" and that identity's secret. Permissions is the one table
// of what each kind may do; the embedded servers' Authenticator and the
// configuration WriteServerConfig generates for standalone servers both
// take their rules from it, so the two cannot drift apart.
package natsauth
