package raftstore

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestStreams_closeEndsAcceptedConnections: closing the stream layer
// closes what it accepted, as a process's exit would: the peer reads the
// end, and the server's own reads end in io.EOF, not a network error.
func TestStreams_closeEndsAcceptedConnections(t *testing.T) {
	s, err := listenStreams("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := s.Dial(raft.ServerAddress(s.Addr().String()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := s.Accept()
	if err != nil {
		t.Fatal(err)
	}
	serverRead := make(chan error, 1)
	go func() {
		_, err := server.Read(make([]byte, 1))
		serverRead <- err
	}()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := <-serverRead; err != io.EOF {
		t.Fatalf("server read after close: %v, want io.EOF", err)
	}
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := client.Read(make([]byte, 1)); err == nil || errors.Is(err, net.ErrClosed) {
		t.Fatalf("peer read after close: %v, want the connection ended by the other side", err)
	}
	if _, err := s.Accept(); err == nil {
		t.Fatal("accept after close succeeded")
	}
	if _, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second); err == nil {
		t.Fatal("dial after close succeeded")
	}
}

// TestStreams_unspecifiedAddressNeedsAdvertise: a listener on every
// interface cannot tell peers where to dial without an advertise address.
func TestStreams_unspecifiedAddressNeedsAdvertise(t *testing.T) {
	if _, err := listenStreams("0.0.0.0:0", nil); !errors.Is(err, errNotAdvertisable) {
		t.Fatalf("got %v, want errNotAdvertisable", err)
	}
	adv := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7000}
	s, err := listenStreams("0.0.0.0:0", adv)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Addr().String() != adv.String() {
		t.Fatalf("addr %s, want %s", s.Addr(), adv)
	}
}
