package devcluster

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/allot-project/allot/master"
	"github.com/allot-project/allot/natsauth"
)

// natsReadyTimeout bounds waiting for the embedded NATS server.
const natsReadyTimeout = 10 * time.Second

// startNATS starts the cluster's embedded NATS server on addr (host:port),
// admitting only the connections auth authenticates, and waits until it
// accepts clients.
func startNATS(addr string, auth natsauth.Config, logger hclog.Logger) (*server.Server, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName: "allot-dev",
		Host:       host,
		Port:       port,
		MaxPayload: 8 << 20,
		NoSigs:     true,
	}
	if err := auth.Apply(opts); err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	srv.SetLoggerV2(master.NATSLogger(logger), false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(natsReadyTimeout) {
		srv.Shutdown()
		return nil, fmt.Errorf("nats server on %s: not ready after %s", addr, natsReadyTimeout)
	}
	return srv, nil
}
