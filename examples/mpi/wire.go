package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"time"
)

// The ranks' wire: length-prefixed frames over TCP, one kind byte and a
// payload. Control frames carry JSON, chunk frames raw float64s. Every
// read and write has a deadline.

// Frame kinds.
const (
	kindHello byte = iota + 1 // hello: the first frame of every connection
	kindRing                  // ringMsg: rank 0 to every rank
	kindChunk                 // a slice of a vector being reduced
	kindDone                  // doneMsg: every rank to rank 0 at the end
)

// maxFrame bounds a frame's payload: a whole vector and its header.
const maxFrame = 8*maxVectorLen + 64

// hello opens a connection: a rank joining rank 0 (Join) or a rank
// connecting to its right neighbour in the ring.
type hello struct {
	Join bool `json:"join"`
	Rank int  `json:"rank"`
	Size int  `json:"size"`
	// Addr is where the joining rank listens for its left neighbour.
	Addr string `json:"addr,omitempty"`
}

// ringMsg tells every rank where each rank listens, by rank.
type ringMsg struct {
	Addrs []string `json:"addrs"`
}

// doneMsg is what a rank found.
type doneMsg struct {
	Rank     int     `json:"rank"`
	Checksum float64 `json:"checksum"`
	Pi       float64 `json:"pi"`
}

// peer is one end of a connection between two ranks.
type peer struct {
	c    net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	step time.Duration // deadline of each read or write
	stop time.Time     // the rank's overall deadline
}

func newPeer(c net.Conn, step time.Duration, stop time.Time) *peer {
	return &peer{c: c, r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16), step: step, stop: stop}
}

// deadline is the deadline of the next network step.
func (p *peer) deadline() time.Time {
	d := time.Now().Add(p.step)
	if !p.stop.IsZero() && p.stop.Before(d) {
		return p.stop
	}
	return d
}

func (p *peer) close() { _ = p.c.Close() }

// send writes one frame.
func (p *peer) send(kind byte, payload []byte) error {
	if err := p.c.SetWriteDeadline(p.deadline()); err != nil {
		return err
	}
	var hdr [5]byte
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if _, err := p.w.Write(hdr[:]); err != nil {
		return fmt.Errorf("send to %s: %w", p.c.RemoteAddr(), err)
	}
	if _, err := p.w.Write(payload); err != nil {
		return fmt.Errorf("send to %s: %w", p.c.RemoteAddr(), err)
	}
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("send to %s: %w", p.c.RemoteAddr(), err)
	}
	return nil
}

// recv reads one frame, which must be of kind want.
func (p *peer) recv(want byte) ([]byte, error) {
	if err := p.c.SetReadDeadline(p.deadline()); err != nil {
		return nil, err
	}
	var hdr [5]byte
	if _, err := io.ReadFull(p.r, hdr[:]); err != nil {
		return nil, fmt.Errorf("receive from %s: %w", p.c.RemoteAddr(), err)
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if hdr[0] != want {
		return nil, fmt.Errorf("receive from %s: frame kind %d, want %d", p.c.RemoteAddr(), hdr[0], want)
	}
	if n > maxFrame {
		return nil, fmt.Errorf("receive from %s: frame of %d bytes", p.c.RemoteAddr(), n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(p.r, buf); err != nil {
		return nil, fmt.Errorf("receive from %s: %w", p.c.RemoteAddr(), err)
	}
	return buf, nil
}

func (p *peer) sendJSON(kind byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return p.send(kind, b)
}

func (p *peer) recvJSON(kind byte, v any) error {
	b, err := p.recv(kind)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("receive from %s: %w", p.c.RemoteAddr(), err)
	}
	return nil
}

// sendChunk sends chunk index c of a vector: its values.
func (p *peer) sendChunk(c int, vals []float64) error {
	b := make([]byte, 4+8*len(vals))
	binary.BigEndian.PutUint32(b, uint32(c))
	for i, v := range vals {
		binary.BigEndian.PutUint64(b[4+8*i:], math.Float64bits(v))
	}
	return p.send(kindChunk, b)
}

// recvChunk receives chunk index c of a vector, which must hold n values.
func (p *peer) recvChunk(c, n int) ([]float64, error) {
	b, err := p.recv(kindChunk)
	if err != nil {
		return nil, err
	}
	if len(b) != 4+8*n {
		return nil, fmt.Errorf("chunk %d from %s: %d bytes, want %d values", c, p.c.RemoteAddr(), len(b), n)
	}
	if got := int(binary.BigEndian.Uint32(b)); got != c {
		return nil, fmt.Errorf("chunk from %s: index %d, want %d", p.c.RemoteAddr(), got, c)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.BigEndian.Uint64(b[4+8*i:]))
	}
	return out, nil
}

// dial connects to addr, trying again while nobody listens there yet
// (the rank there may not have started), until ctx ends.
func dial(ctx context.Context, addr string, step time.Duration) (net.Conn, error) {
	wait := 20 * time.Millisecond
	for {
		d := net.Dialer{Timeout: step}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to %s: %w (last error: %w)", addr, context.Cause(ctx), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// accept waits for one connection on ln until the step's deadline.
func accept(ln *net.TCPListener, deadline time.Time) (net.Conn, error) {
	if err := ln.SetDeadline(deadline); err != nil {
		return nil, err
	}
	c, err := ln.Accept()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("no connection on %s before %s", ln.Addr(), deadline.Format(time.TimeOnly))
		}
		return nil, err
	}
	return c, nil
}
