package master

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
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
	// Token, when set, is the NATS authorization token: the embedded
	// server accepts only clients that present it (nats://TOKEN@host:4222
	// in their URLs), routes between the masters' servers authenticate with
	// it (user "allot"), and the master presents it itself, to external
	// servers too.
	Token string
}

// routeUser is the user name routes between embedded servers authenticate
// as when NATSConfig.Token is set.
const routeUser = "allot"

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
func startNATS(cfg NATSConfig, logger hclog.Logger) (*embeddedNATS, error) {
	opts := &server.Options{
		ServerName: "",
		Host:       cfg.Host,
		Port:       cfg.Port,
		MaxPayload: cfg.MaxPayload,
		NoSigs:     true,
		NoLog:      false,
	}
	if cfg.Token != "" {
		opts.Authorization = cfg.Token
	}
	if cfg.ClusterPort != 0 {
		opts.Cluster = server.ClusterOpts{
			Name: cfg.ClusterName,
			Host: cfg.ClusterHost,
			Port: cfg.ClusterPort,
		}
		if cfg.Token != "" {
			opts.Cluster.Username, opts.Cluster.Password = routeUser, cfg.Token
		}
		for _, r := range cfg.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("%w: route %q: %v", ErrConfig, r, err)
			}
			if cfg.Token != "" && u.User == nil {
				u.User = url.UserPassword(routeUser, cfg.Token)
			}
			opts.Routes = append(opts.Routes, u)
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
