package master

import (
	"crypto/subtle"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/protocol"
)

// Framework authentication (Config.Credentials, protocol.TokenHeader):
// with credentials configured, every framework call must carry the secret
// of the principal it acts as. Subscribe acts as the principal it names,
// every other call as the principal its framework registered with (which a
// resubscribe may not change), so a framework can only be driven by someone
// who holds its principal's secret. Agents are not authenticated.

// authenticate refuses a framework call without its principal's secret.
// Calls for frameworks the master does not know are left to their handlers,
// which say so.
func (l *leader) authenticate(msg *nats.Msg, c caller) error {
	creds := l.m.cfg.Credentials
	if len(creds) == 0 || !c.known {
		return nil
	}
	principal := c.principal
	var token string
	if msg.Header != nil {
		token = msg.Header.Get(protocol.TokenHeader)
	}
	secret, ok := creds[principal]
	// Compared even for an unknown principal, so the time taken does not
	// tell which principals exist.
	match := subtle.ConstantTimeCompare([]byte(token), []byte(secret)) == 1
	if !ok || !match || token == "" {
		return fmt.Errorf("%w: no valid credential for principal %q", protocol.ErrUnauthorized, clipText(principal))
	}
	return nil
}

// clipText shortens text from a request for an error message.
func clipText(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
