package framework

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsclient"
	"github.com/allot-project/allot/protocol"
)

// connect returns the NATS connection to use and whether the driver owns
// it.
func (d *Driver) connect() (*nats.Conn, bool, error) {
	return dialNATS(d.cfg, d.subj, d.logger, d.fail)
}

// dialNATS returns the connection cfg names, or a new one made with its
// URLs and credentials, and whether the caller owns it. onRefused is told
// when the cluster refuses a subject: the connection was given a
// principal its credential is not.
func dialNATS(cfg config, subj protocol.Subjects, logger hclog.Logger, onRefused func(error)) (*nats.Conn, bool, error) {
	if cfg.nc != nil {
		if cfg.nc.IsClosed() {
			return nil, false, fmt.Errorf("%w: the NATS connection is closed", ErrClosed)
		}
		return cfg.nc, false, nil
	}
	urls := cfg.urls
	if len(urls) == 0 {
		urls = []string{nats.DefaultURL}
	}
	opts := append(natsclient.Options(),
		nats.Name(cfg.name),
		nats.RetryOnFailedConnect(true),
		// Replies come on the principal's own inbox subjects, the only
		// ones its connection may read where connections are authenticated.
		nats.CustomInboxPrefix(subj.Inbox(protocol.KindFramework, cfg.principal)),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			subject := ""
			if s != nil {
				subject = s.Subject
			}
			logger.Warn("nats error", "subject", subject, "error", err)
			if errors.Is(err, nats.ErrPermissionViolation) {
				onRefused(fmt.Errorf("%w: the cluster refused a subject of principal %q: %v", protocol.ErrUnauthorized,
					protocol.PrincipalToken(cfg.principal), err))
			}
		}),
	)
	if cfg.natsCA != "" {
		opts = append(opts, nats.RootCAs(cfg.natsCA))
	}
	if cfg.natsCert != "" {
		opts = append(opts, nats.ClientCert(cfg.natsCert, cfg.natsKey))
	}
	if cfg.natsCA != "" || cfg.natsCert != "" {
		opts = append(opts, nats.Secure())
	}
	if cfg.secret != "" {
		user := protocol.Identity{Kind: protocol.KindFramework, Name: cfg.principal}.String()
		opts = append(opts, nats.UserInfo(user, cfg.secret))
	}
	nc, err := nats.Connect(strings.Join(urls, ","), opts...)
	if err != nil {
		return nil, false, fmt.Errorf("connect to NATS: %w", err)
	}
	return nc, true, nil
}
