package framework

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// resolvePrincipal settles who the framework connects as: with a client
// certificate and no principal, the principal the certificate names (a
// cluster on mutual TLS takes the identity from the certificate, so the
// subjects the driver uses must name the same one); a secret needs a
// principal.
func (c *config) resolvePrincipal() error {
	if c.principal == "" && c.natsCert != "" {
		p, err := protocol.CertPrincipal(c.natsCert, protocol.KindFramework)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
		c.principal = p
	}
	if c.secret != "" && c.principal == "" {
		return fmt.Errorf("%w: a secret needs a principal (WithPrincipal)", ErrInvalidSpec)
	}
	return nil
}

// refusedCredential turns the failure of a driver whose NATS connection
// was refused for its credential (the servers close it after refusing it
// twice) into protocol.ErrUnauthorized, saying so.
func refusedCredential(nc *nats.Conn, err error) error {
	if err == nil || errors.Is(err, protocol.ErrUnauthorized) {
		return err
	}
	if last := nc.LastError(); last != nil && (errors.Is(last, nats.ErrAuthorization) || errors.Is(last, nats.ErrAuthExpired) ||
		errors.Is(last, nats.ErrAuthRevoked)) {
		return fmt.Errorf("%w: NATS refused the connection's credential (%v): %w", protocol.ErrUnauthorized, last, err)
	}
	return err
}
