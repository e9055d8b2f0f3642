package simagent

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/allot-project/allot/protocol"
)

// TestMain fails the package's tests if any leaves a goroutine running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBehaviour_RoundTrip(t *testing.T) {
	for _, b := range []Behaviour{Finish(50 * time.Millisecond), Fail(0), RunUntilKilled()} {
		got, err := ParseBehaviour(b.String())
		if err != nil || got != b {
			t.Errorf("ParseBehaviour(%q) = %v, %v; want %v", b.String(), got, err, b)
		}
		info := protocol.TaskInfo{Labels: b.Labels()}
		if got := behaviourOf(info, Finish(time.Hour)); got != b {
			t.Errorf("behaviourOf(%v) = %v", b, got)
		}
	}
	for _, s := range []string{"", "finish", "fail:-1s", "walk:1s"} {
		if _, err := ParseBehaviour(s); err == nil {
			t.Errorf("ParseBehaviour(%q): no error", s)
		}
	}
	def := Fail(time.Second)
	bad := protocol.TaskInfo{Labels: map[string]string{LabelBehaviour: "nonsense"}}
	if got := behaviourOf(bad, def); got != def {
		t.Errorf("unparsable label: got %v, want the default %v", got, def)
	}
}

func TestOptions_Defaults(t *testing.T) {
	var o Options
	o.setDefaults(7)
	if o.Hostname != "agent-7" || !o.Resources.Equal(DefaultResources()) || o.Behaviour != Finish(50*time.Millisecond) ||
		o.ResendInterval != 100*time.Millisecond || o.RequestTimeout != time.Second ||
		o.RegisterTimeout != 10*time.Second || o.Version != "simagent" {
		t.Errorf("defaults: %+v", o)
	}
	o = Options{Hostname: "h", Version: "v", RegisterTimeout: time.Minute}
	o.setDefaults(1)
	if o.Hostname != "h" || o.Version != "v" || o.RegisterTimeout != time.Minute {
		t.Errorf("set fields changed: %+v", o)
	}
}

// Without a master nobody answers: Start gives up after RegisterTimeout,
// closes the connection it was given and leaves nothing running.
func TestStart_NoMaster(t *testing.T) {
	nc, err := nats.Connect(natsServer(t))
	if err != nil {
		t.Fatal(err)
	}
	subj := protocol.Subjects{Prefix: protocol.DefaultSubjectPrefix}
	a, err := Start(nc, subj, 0, Options{RegisterTimeout: 200 * time.Millisecond, RequestTimeout: 50 * time.Millisecond}, nil)
	if err == nil {
		a.Close()
		t.Fatal("Start without a master: no error")
	}
	if !nc.IsClosed() {
		t.Error("Start failed but left its connection open")
	}
}

// natsServer starts a NATS server for the test and returns its URL.
func natsServer(t *testing.T) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	return ns.ClientURL()
}
