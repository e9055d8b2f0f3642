// Package coflowbook is the leader's book of live shuffles: the coflows
// frameworks registered, what their senders report of each flow, and the
// priority lists the coflow coordinator (package coflow) decides for each
// agent's egress, turned into the commands the leader sends. It holds its
// own lock; the leader calls it from its request handlers and its timers,
// and sends what it returns.
package coflowbook
