package master

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/natsauth"
	"github.com/allot-project/allot/protocol"
)

// NATSConfig says how a master reaches NATS: either an embedded server
// (the default; the masters' servers join one NATS cluster through routes,
// so clients may connect to any of them) or external servers.
type NATSConfig struct {
	// External, when set, are the URLs of NATS servers to use instead of
	// embedding one.
	External []string
	// Host and Port are the embedded server's client listener (port 4222 by
	// default; -1 picks a free port).
	Host string
	Port int
	// ClusterName, ClusterHost and ClusterPort are the embedded server's
	// route listener (port 6222 by default; -1 picks a free port).
	ClusterName string
	ClusterHost string
	ClusterPort int
	// Routes are the other masters' route URLs, e.g. nats-route://10.0.0.2:6222.
	Routes []string
	// MaxPayload caps a message's size in bytes.
	MaxPayload int32
	// MasterSecret is the masters' shared secret: each master connects to
	// NATS as "master.<node id>" with it (to external servers too), and the
	// routes between the masters' embedded servers authenticate with it.
	// Which clients the embedded server admits, and what each may do, is
	// Config's credentials (package natsauth).
	MasterSecret string
	// TLS, when its certificate is set, makes the embedded server speak
	// only TLS, to clients and on routes; the master's own connection, to
	// the embedded or external servers, uses it as a client.
	TLS NATSTLS
}

// NATSTLS are PEM files for NATS over TLS.
type NATSTLS struct {
	// Cert and Key are this master's certificate and key: the embedded
	// server's, the routes' (both ways) and, when the servers verify
	// clients, the master's client certificate.
	Cert, Key string
	// CA verifies the servers' certificates, and clients' when
	// VerifyClients is set; empty uses the system's roots.
	CA string
	// VerifyClients makes the embedded server accept only clients with a
	// certificate CA signed (agents' and frameworks' included): mutual TLS.
	VerifyClients bool
}

// enabled reports whether TLS is configured.
func (t NATSTLS) enabled() bool { return t.Cert != "" || t.CA != "" }

// clientOptions are the NATS client options of master nodeID's connection:
// its credential, and TLS.
func (c NATSConfig) clientOptions(nodeID string) []nats.Option {
	opts := c.TLS.clientOptions()
	if c.MasterSecret != "" {
		name := nodeID
		if !protocol.ValidPrincipal(name) {
			name = string(protocol.KindMaster)
		}
		user := protocol.Identity{Kind: protocol.KindMaster, Name: name}.String()
		opts = append(opts, nats.UserInfo(user, c.MasterSecret))
	}
	return opts
}

// clientOptions are the TLS options of a master's connection.
func (t NATSTLS) clientOptions() []nats.Option {
	var opts []nats.Option
	if t.CA != "" {
		opts = append(opts, nats.RootCAs(t.CA))
	}
	if t.Cert != "" && t.Key != "" {
		opts = append(opts, nats.ClientCert(t.Cert, t.Key))
	}
	if t.enabled() {
		opts = append(opts, nats.Secure())
	}
	return opts
}

// serverTLS builds the embedded server's TLS settings: for clients, and
// for routes, which always verify each other.
func (t NATSTLS) serverTLS() (clients, routes *tls.Config, err error) {
	if t.Cert == "" || t.Key == "" {
		return nil, nil, fmt.Errorf("%w: NATS TLS needs a certificate and its key", ErrConfig)
	}
	base := server.TLSConfigOpts{CertFile: t.Cert, KeyFile: t.Key, CaFile: t.CA, Verify: t.VerifyClients}
	if clients, err = server.GenTLSConfig(&base); err != nil {
		return nil, nil, fmt.Errorf("%w: NATS TLS: %v", ErrConfig, err)
	}
	base.Verify = true
	if routes, err = server.GenTLSConfig(&base); err != nil {
		return nil, nil, fmt.Errorf("%w: NATS route TLS: %v", ErrConfig, err)
	}
	// A route is dialled as well as accepted: the dialling side verifies
	// the other server against the same CA.
	routes.RootCAs = routes.ClientCAs
	return clients, routes, nil
}

// natsTLSTimeout bounds a TLS handshake, in seconds.
const natsTLSTimeout = 2

// routeUser is the user name routes between embedded servers authenticate
// as when NATSConfig.MasterSecret is set.
const routeUser = "allot-route"

// DefaultNATSConfig is an embedded server on the standard ports.
func DefaultNATSConfig() NATSConfig {
	return NATSConfig{
		Host:        "0.0.0.0",
		Port:        4222,
		ClusterName: "allot",
		ClusterHost: "0.0.0.0",
		ClusterPort: 6222,
		MaxPayload:  8 << 20,
	}
}

// Embedded reports whether the master runs its own server.
func (c NATSConfig) Embedded() bool { return len(c.External) == 0 }

// Validate checks the configuration.
func (c NATSConfig) Validate() error {
	switch t := c.TLS; {
	case (t.Cert == "") != (t.Key == ""):
		return fmt.Errorf("%w: NATS TLS needs both a certificate and its key", ErrConfig)
	case t.VerifyClients && (t.CA == "" || t.Cert == ""):
		return fmt.Errorf("%w: verifying NATS clients needs a CA, a certificate and its key", ErrConfig)
	}
	if !c.Embedded() {
		for _, u := range c.External {
			if _, err := url.Parse(u); err != nil || u == "" {
				return fmt.Errorf("%w: NATS URL %q", ErrConfig, u)
			}
		}
		return nil
	}
	if c.Port < -1 || c.Port > 65535 || c.ClusterPort < -1 || c.ClusterPort > 65535 {
		return fmt.Errorf("%w: NATS ports %d/%d", ErrConfig, c.Port, c.ClusterPort)
	}
	if c.MaxPayload <= 0 {
		return fmt.Errorf("%w: NATS max payload %d", ErrConfig, c.MaxPayload)
	}
	for _, r := range c.Routes {
		if _, err := url.Parse(r); err != nil {
			return fmt.Errorf("%w: NATS route %q: %v", ErrConfig, r, err)
		}
	}
	return nil
}

// embeddedNATS is a running embedded NATS server.
type embeddedNATS struct {
	srv *server.Server
}

// startNATS starts an embedded server and waits until it accepts clients.
// auth, when set, authenticates every client and gives each its identity's
// permissions.
func startNATS(cfg NATSConfig, auth *natsauth.Config, logger hclog.Logger) (*embeddedNATS, error) {
	opts := &server.Options{
		ServerName: "",
		Host:       cfg.Host,
		Port:       cfg.Port,
		MaxPayload: cfg.MaxPayload,
		NoSigs:     true,
		NoLog:      false,
	}
	if auth != nil {
		if err := auth.Apply(opts); err != nil {
			return nil, fmt.Errorf("%w: NATS authentication: %v", ErrConfig, err)
		}
	}
	var routeTLS *tls.Config
	if cfg.TLS.enabled() {
		clients, routes, err := cfg.TLS.serverTLS()
		if err != nil {
			return nil, err
		}
		opts.TLSConfig, opts.TLS, opts.TLSVerify, opts.TLSTimeout = clients, true, cfg.TLS.VerifyClients, natsTLSTimeout
		routeTLS = routes
	}
	if cfg.ClusterPort != 0 {
		opts.Cluster = server.ClusterOpts{
			Name: cfg.ClusterName,
			Host: cfg.ClusterHost,
			Port: cfg.ClusterPort,
		}
		if routeTLS != nil {
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = routeTLS, natsTLSTimeout
		}
		if cfg.MasterSecret != "" {
			opts.Cluster.Username, opts.Cluster.Password = routeUser, cfg.MasterSecret
		}
		for _, r := range cfg.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("%w: route %q: %v", ErrConfig, r, err)
			}
			if cfg.MasterSecret != "" && u.User == nil {
				u.User = url.UserPassword(routeUser, cfg.MasterSecret)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	// A port already taken would only show as a server never ready.
	if err := portFree("client", cfg.Host, cfg.Port, "--nats-listen"); err != nil {
		return nil, err
	}
	if cfg.ClusterPort != 0 {
		if err := portFree("route", cfg.ClusterHost, cfg.ClusterPort, "--nats-cluster"); err != nil {
			return nil, err
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	srv.SetLoggerV2(NATSLogger(logger.Named("nats")), false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("nats server: not ready after 10s")
	}
	return &embeddedNATS{srv: srv}, nil
}

// ClientURL is the URL clients use to reach the server.
func (e *embeddedNATS) ClientURL() string { return e.srv.ClientURL() }

// RouteURL is the URL other masters use to route to this server.
func (e *embeddedNATS) RouteURL() string {
	addr := e.srv.ClusterAddr()
	if addr == nil {
		return ""
	}
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "nats-route://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

// NumRoutes is how many other servers this one is routed to.
func (e *embeddedNATS) NumRoutes() int { return e.srv.NumRoutes() }

func (e *embeddedNATS) shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// NATSLogger adapts l to the NATS server's logger, for every process that
// embeds a NATS server.
func NATSLogger(l hclog.Logger) server.Logger { return natsLogger{l} }

// natsLogger adapts hclog to the NATS server's logger.
type natsLogger struct{ l hclog.Logger }

func (n natsLogger) Noticef(format string, v ...any) { n.l.Info(fmt.Sprintf(format, v...)) }
func (n natsLogger) Warnf(format string, v ...any)   { n.l.Warn(fmt.Sprintf(format, v...)) }
func (n natsLogger) Fatalf(format string, v ...any)  { n.l.Error(fmt.Sprintf(format, v...)) }
func (n natsLogger) Errorf(format string, v ...any)  { n.l.Error(fmt.Sprintf(format, v...)) }
func (n natsLogger) Debugf(format string, v ...any)  { n.l.Debug(fmt.Sprintf(format, v...)) }
func (n natsLogger) Tracef(format string, v ...any)  { n.l.Trace(fmt.Sprintf(format, v...)) }

// portFree checks that the embedded NATS server can listen on host:port
// (port 0: any), naming the flag that sets it when it cannot.
func portFree(what, host string, port int, flag string) error {
	if port <= 0 {
		return nil
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: the embedded NATS server cannot listen for %ss on %s (%v): another master or NATS server may run there; choose another with %s",
			ErrConfig, what, addr, err, flag)
	}
	return l.Close()
}
