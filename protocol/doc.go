// Package protocol is allot's wire: the one place that defines what crosses
// NATS between frameworks, the master and agents.
//
// It holds:
//
//   - value types shared by every component: Resources and Ranges,
//     agent Attributes, placement Constraints;
//   - typed IDs (FrameworkID, AgentID, OfferID, TaskID, StatusUUID) with
//     NewID and ValidID;
//   - NATS subject names (Subjects) and the verbs of the request/reply API;
//   - every message struct (requests, replies, events, agent commands and the
//     leader announcement), each with explicit msgpack and json tags;
//   - the single codec: Encode, Decode and DecodeBody for envelopes, and
//     EncodeReply and DecodeReply for request/reply payloads;
//   - wire error codes (Code, Error, ToWire, FromWire) so that errors.Is
//     works across the wire.
//
// # Envelope and codec
//
// Every NATS payload is a msgpack Envelope {v: Version, t: MsgType, b: body}.
// Requests, events and commands carry their message struct as the body. A
// reply to a request is an Envelope of type MsgReply whose body is a Reply:
// either an Error or a typed result body (see reply.go).
//
// Decode never panics and never trusts a length prefix: before msgpack sees
// the bytes, a structural scan checks that the payload is exactly one
// well-formed msgpack value, no deeper than MaxDepth, with no more than
// MaxArrayElems array elements and MaxMapEntries map entries in total, and
// no container longer than the bytes left. Callers must still call Validate
// on every request they receive: decoding checks shape, Validate checks
// content (IDs, resources, constraints, list lengths).
//
// # Compatibility
//
// Message fields are maps keyed by short msgpack names. Names and MsgType
// numbers are never renumbered or repurposed; new fields may be added and
// unknown fields are ignored by older decoders. Incompatible changes bump
// Version.
//
// This package imports only the standard library and msgpack; it performs no
// I/O and keeps no state except a bounded cache of compiled regular
// expressions.
package protocol
