package integration

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/framework"
	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testcluster/executors"
	"github.com/allot-project/allot/protocol"
)

// TestCluster_NATSTLS: with NATS over mutual TLS, masters, a real agent and
// an SDK framework, each presenting its certificate, run a task to the
// end; a client without a certificate is refused.
func TestCluster_NATSTLS(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3, NATSTLS: true})
	e := executors.New(t, c, executors.Options{})
	files, _ := c.TLSFiles()
	if nc, err := nats.Connect(c.NATSURL(), nats.RootCAs(files.CA)); err == nil {
		nc.Close()
		t.Fatal("a client without a certificate connected")
	}
	if _, err := framework.NewDriver(newRecorder(), framework.WithNATSTLS(files.CA, files.Cert, "")); err == nil {
		t.Fatal("a driver took a client certificate without its key")
	}
	rec := newRecorder()
	f := runDriver(t, newDriver(t, c, rec, framework.WithFailoverTimeout(time.Minute)), rec)
	task := shTask("hello", "echo over tls")
	f.launch(t, e.ID(), task)
	if st := rec.WaitState(t, "hello", protocol.TaskFinished); st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("task over TLS: %+v", st)
	}
}
