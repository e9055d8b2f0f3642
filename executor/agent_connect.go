package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// connect dials NATS unless a connection was given. While no server
// answers (the masters not up yet) it tries again, more slowly each time,
// until ctx ends; any other failure ends it at once.
func (a *Agent) connect(ctx context.Context) error {
	nc := a.cfg.NATSConn
	if nc == nil {
		var err error
		opts := append(natsclient.AgentOptions(), nats.Name("allot-agent-"+a.cfg.Hostname),
			// Commands sent while the connection was down, or stuck on a
			// server that stopped answering, are lost: reregistering has
			// the leader send again the launches this agent never saw.
			nats.ReconnectHandler(func(*nats.Conn) {
				if a.ID() != "" {
					a.log.Info("NATS connection back; reregistering")
					a.wantReregister()
				}
			}))
		if a.cfg.NATSCA != "" {
			opts = append(opts, nats.RootCAs(a.cfg.NATSCA))
		}
		if a.cfg.NATSCert != "" || a.cfg.NATSKey != "" {
			opts = append(opts, nats.ClientCert(a.cfg.NATSCert, a.cfg.NATSKey))
		}
		if a.cfg.NATSCA != "" || a.cfg.NATSCert != "" {
			opts = append(opts, nats.Secure())
		}
		if a.cfg.Secret != "" {
			user := protocol.Identity{Kind: protocol.KindAgent, Name: a.cfg.Principal}.String()
			opts = append(opts, nats.UserInfo(user, a.cfg.Secret))
		}
		// Replies come on the credential's own inbox subjects, the only
		// ones its connection may read where connections are authenticated.
		opts = append(opts, nats.CustomInboxPrefix(a.subj.Inbox(protocol.KindAgent, a.cfg.Principal)))
		urls := joinURLs(a.cfg.NATSURLs)
		for pause := connectPause; ; pause = min(2*pause, maxConnectPause) {
			nc, err = nats.Connect(urls, opts...)
			if err == nil {
				break
			}
			if !errors.Is(err, nats.ErrNoServers) {
				return fmt.Errorf("connect to NATS at %s: %w", urls, err)
			}
			a.log.Warn("no NATS server answers yet; trying again", "urls", urls, "retry_in", pause, "error", err)
			select {
			case <-ctx.Done():
				return fmt.Errorf("connect to NATS at %s: %w (gave up: %v)", urls, err, ctx.Err())
			case <-time.After(pause):
			}
		}
	}
	a.mu.Lock()
	a.nc = nc
	a.mu.Unlock()
	a.req = newRequester(nc, a.subj, a.cfg.RequestTimeout, a.cfg.Principal)
	return nil
}

// connectPause and maxConnectPause pace the tries to reach NATS.
const (
	connectPause    = 500 * time.Millisecond
	maxConnectPause = 5 * time.Second
)

func joinURLs(urls []string) string {
	s := ""
	for i, u := range urls {
		if i > 0 {
			s += ","
		}
		s += u
	}
	return s
}
