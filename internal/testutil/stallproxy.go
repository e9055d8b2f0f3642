package testutil

import (
	"io"
	"net"
	"sync"
	"testing"
)

// StallProxy forwards TCP connections to a server until Stall: from then
// on it keeps every socket open and passes nothing on, either way, as a
// paused process (SIGSTOP, a hung master) does.
type StallProxy struct {
	ln      net.Listener
	target  string
	stalled chan struct{} // closed by Stall
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
}

// NewStallProxy listens on a loopback port and forwards to target
// (host:port) until the test ends.
func NewStallProxy(t testing.TB, target string) *StallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &StallProxy{ln: ln, target: target, stalled: make(chan struct{})}
	t.Cleanup(p.close)
	go p.serve()
	return p
}

// Addr is the proxy's host:port.
func (p *StallProxy) Addr() string { return p.ln.Addr().String() }

// Stall stops passing bytes on, for good.
func (p *StallProxy) Stall() { p.once.Do(func() { close(p.stalled) }) }

func (p *StallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go p.pipe(s, c)
		go p.pipe(c, s)
	}
}

// pipe copies src to dst until stalled; after that it reads and drops, so
// that the sender's writes succeed and nothing comes back.
func (p *StallProxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		select {
		case <-p.stalled:
			continue
		default:
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (p *StallProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}
