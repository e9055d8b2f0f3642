package natsauth

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// Apply makes an embedded server's options authenticate clients with c:
// opts.CustomClientAuthentication becomes c's Authenticator. Options
// that authenticate clients some other way are refused rather than
// silently ignored, since the server consults only the custom
// authenticator once it is set. Routes, listeners and TLS are the
// caller's; with Certificates, the caller must also make the server
// verify client certificates (opts.TLSVerify).
func (c Config) Apply(opts *server.Options) error {
	if opts == nil {
		return fmt.Errorf("%w: no server options", ErrConfig)
	}
	if opts.Username != "" || opts.Password != "" || opts.Authorization != "" ||
		len(opts.Users) > 0 || len(opts.Nkeys) > 0 || len(opts.TrustedOperators) > 0 ||
		len(opts.TrustedKeys) > 0 || opts.AuthCallout != nil {
		return fmt.Errorf("%w: the server options already authenticate clients another way", ErrConfig)
	}
	a, err := NewAuthenticator(c)
	if err != nil {
		return err
	}
	opts.CustomClientAuthentication = a
	return nil
}
