package raftstore

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// tcpStreams is the TCP transport's stream layer. Unlike hashicorp/raft's
// own it keeps the connections it accepted and closes them when the
// transport closes, as the kernel does when a process exits: a node shut
// down in a process that lives on then looks, to the peers that hold a
// connection to it (the followers' leader watch), like one whose process
// ended.
type tcpStreams struct {
	listener  net.Listener
	advertise net.Addr

	mu       sync.Mutex
	accepted map[*acceptedConn]struct{}
	closed   bool
}

var errNotAdvertisable = errors.New("the local bind address cannot be advertised: set an advertise address")

// listenStreams binds bindAddr. advertise, when not nil, is the address
// peers dial; otherwise the listener's, which must then be a specific IP.
func listenStreams(bindAddr string, advertise net.Addr) (*tcpStreams, error) {
	ln, err := net.Listen("tcp", bindAddr)
	if err != nil {
		return nil, err
	}
	s := &tcpStreams{listener: ln, advertise: advertise, accepted: make(map[*acceptedConn]struct{})}
	addr, ok := s.Addr().(*net.TCPAddr)
	if !ok || addr.IP == nil || addr.IP.IsUnspecified() {
		return nil, errors.Join(errNotAdvertisable, ln.Close())
	}
	return s, nil
}

// Accept implements net.Listener.
func (s *tcpStreams) Accept() (net.Conn, error) {
	c, err := s.listener.Accept()
	if err != nil {
		return nil, err
	}
	ac := &acceptedConn{Conn: c, streams: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.Join(net.ErrClosed, c.Close())
	}
	s.accepted[ac] = struct{}{}
	return ac, nil
}

// Close stops listening and closes every accepted connection still open.
func (s *tcpStreams) Close() error {
	err := s.listener.Close()
	s.mu.Lock()
	s.closed = true
	conns := s.accepted
	s.accepted = nil
	s.mu.Unlock()
	for c := range conns {
		c.closeFromHere()
	}
	return err
}

// Addr implements net.Listener: the advertised address.
func (s *tcpStreams) Addr() net.Addr {
	if s.advertise != nil {
		return s.advertise
	}
	return s.listener.Addr()
}

// Dial implements raft.StreamLayer.
func (s *tcpStreams) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(address), timeout)
}

func (s *tcpStreams) forget(c *acceptedConn) {
	s.mu.Lock()
	delete(s.accepted, c)
	s.mu.Unlock()
}

// acceptedConn is an accepted connection that leaves its stream layer's
// set when closed. Once the stream layer has closed it, reads end as at
// the peer's close (io.EOF), so the transport's server goroutine ends
// without logging a decode error.
type acceptedConn struct {
	net.Conn
	streams *tcpStreams

	mu             sync.Mutex
	closedFromHere bool
}

func (c *acceptedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.mu.Lock()
		ours := c.closedFromHere
		c.mu.Unlock()
		if ours {
			err = io.EOF
		}
	}
	return n, err
}

func (c *acceptedConn) Close() error {
	c.streams.forget(c)
	return c.Conn.Close()
}

func (c *acceptedConn) closeFromHere() {
	c.mu.Lock()
	c.closedFromHere = true
	c.mu.Unlock()
	_ = c.Conn.Close()
}
