package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/allot-project/allot/natsauth"
	"github.com/allot-project/allot/protocol"
)

// natsConfigFlags are the `allot nats-config` settings: the same
// credentials the masters are given.
type natsConfigFlags struct {
	masters, prefix, listen, out string
	credentials, agentCreds      string
	masterSecret, operatorToken  string
	tlsCert, tlsKey, tlsCA       string
	bcrypt                       bool
}

func natsConfigCommand() *cobra.Command {
	var f natsConfigFlags
	cmd := &cobra.Command{
		Use:   "nats-config",
		Short: "Write a nats-server configuration with allot's identities and permissions",
		Long: `Write the configuration of a standalone nats-server for a cluster whose masters use
external NATS servers (allot master --nats-external): the same identities, and the same
permissions per identity, as the masters' embedded servers enforce (docs/security.md).
Give it the files and secrets the masters are given. Every NATS server of the cluster
needs it; routes between them are configured as usual.

Example:
  allot nats-config --masters m1,m2,m3 --nats-master-secret "$MASTER_SECRET" \
    --credentials creds.json --agent-credentials agents.json --bcrypt --out allot-nats.conf
  nats-server -c allot-nats.conf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.masters, "masters", "", "the masters' node IDs, comma-separated (each connects as master.<node id>)")
	fl.StringVar(&f.prefix, "subject-prefix", protocol.DefaultSubjectPrefix, "the cluster's NATS subject prefix")
	fl.StringVar(&f.credentials, "credentials", "", `JSON file of framework credentials, {"principal": "secret", ...}`)
	fl.StringVar(&f.agentCreds, "agent-credentials", "", `JSON file of agent credentials, {"name": "secret", ...}`)
	fl.StringVar(&f.masterSecret, "nats-master-secret", "", "the masters' shared secret")
	fl.StringVar(&f.operatorToken, "operator-token", "", "the operator token: user operator.admin may then watch the cluster's events")
	fl.StringVar(&f.listen, "listen", "", "the server's client listener, host:port (default: nats-server's)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "server certificate: clients are then admitted by their certificates alone (verify_and_map)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "key of --tls-cert")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "CA that signed the clients' certificates")
	fl.BoolVar(&f.bcrypt, "bcrypt", false, "write bcrypt hashes of the secrets rather than the secrets")
	fl.StringVar(&f.out, "out", "", "write to this file (mode 0600) instead of standard output")
	return cmd
}

func (f natsConfigFlags) run(cmd *cobra.Command) error {
	cfg := natsauth.Config{Subjects: protocol.Subjects{Prefix: f.prefix}, MasterSecret: f.masterSecret,
		OperatorToken: f.operatorToken, Certificates: f.tlsCert != ""}
	if err := readJSONFile("--credentials", f.credentials, &cfg.Frameworks); err != nil {
		return err
	}
	if err := readJSONFile("--agent-credentials", f.agentCreds, &cfg.Agents); err != nil {
		return err
	}
	// Each file on its own first, so that an error names the file.
	for flag, part := range map[string]natsauth.Config{
		"--credentials " + f.credentials:      {Frameworks: cfg.Frameworks},
		"--agent-credentials " + f.agentCreds: {Agents: cfg.Agents},
	} {
		if part.Enabled() {
			if err := part.Validate(); err != nil {
				return fmt.Errorf("%s: %w", flag, err)
			}
		}
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	opts := natsauth.ServerConfigOptions{Masters: splitList(f.masters), Listen: f.listen,
		TLSCert: f.tlsCert, TLSKey: f.tlsKey, TLSCA: f.tlsCA, Bcrypt: f.bcrypt}
	if len(opts.Masters) == 0 {
		return fmt.Errorf("--masters: name the masters' node IDs")
	}
	var buf bytes.Buffer
	if err := natsauth.WriteServerConfig(&buf, cfg, opts); err != nil {
		return err
	}
	if f.out == "" {
		_, err := cmd.OutOrStdout().Write(buf.Bytes())
		return err
	}
	// It holds secrets (or their hashes): readable by its owner only.
	if err := os.WriteFile(f.out, buf.Bytes(), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d users\n", f.out, strings.Count(buf.String(), "user:"))
	return nil
}
