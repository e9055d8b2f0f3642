package natsauth

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/allot-project/allot/protocol"
)

func TestConfigValidate(t *testing.T) {
	if err := testConfig().Validate(); err != nil {
		t.Fatalf("test config: %v", err)
	}
	if err := (Config{Certificates: true}).Validate(); err != nil {
		t.Errorf("certificates alone: %v", err)
	}
	long := strings.Repeat("s", MaxSecretLen+1)
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"nothing to authenticate with", func(c *Config) { *c = Config{} }},
		{"a bad subject prefix", func(c *Config) { c.Subjects = protocol.Subjects{Prefix: "a.>"} }},
		{"an invalid framework name", func(c *Config) { c.Frameworks["a.b"] = "s" }},
		{"a wildcard agent name", func(c *Config) { c.Agents[">"] = "s" }},
		{"an empty name", func(c *Config) { c.Frameworks[""] = "s" }},
		{"a name too long", func(c *Config) { c.Agents[strings.Repeat("n", protocol.MaxPrincipalLen+1)] = "s" }},
		{"the anonymous principal", func(c *Config) { c.Frameworks[protocol.AnonymousPrincipal] = "s" }},
		{"an empty framework secret", func(c *Config) { c.Frameworks["c"] = "" }},
		{"an empty agent secret", func(c *Config) { c.Agents["rack3"] = "" }},
		{"a framework secret too long", func(c *Config) { c.Frameworks["c"] = long }},
		{"a master secret too long", func(c *Config) { c.MasterSecret = long }},
		{"an operator token too long", func(c *Config) { c.OperatorToken = long }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			tc.edit(&cfg)
			if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want %v", err, ErrConfig)
			}
			if _, err := NewAuthenticator(cfg); !errors.Is(err, ErrConfig) {
				t.Fatalf("NewAuthenticator: got %v, want %v", err, ErrConfig)
			}
		})
	}
}

func TestConfigEnabled(t *testing.T) {
	if (Config{Subjects: testSubjects}).Enabled() {
		t.Error("a config with no credential is enabled")
	}
	for name, cfg := range map[string]Config{
		"master secret":  {MasterSecret: "s"},
		"framework":      {Frameworks: map[string]string{"a": "s"}},
		"agent":          {Agents: map[string]string{"a": "s"}},
		"operator token": {OperatorToken: "s"},
		"certificates":   {Certificates: true},
	} {
		if !cfg.Enabled() {
			t.Errorf("%s: not enabled", name)
		}
	}
}

func TestApply(t *testing.T) {
	opts := &server.Options{}
	if err := testConfig().Apply(opts); err != nil {
		t.Fatal(err)
	}
	if _, ok := opts.CustomClientAuthentication.(*Authenticator); !ok {
		t.Fatalf("CustomClientAuthentication is %T", opts.CustomClientAuthentication)
	}
	// The server would ignore these once a custom authenticator is set.
	for name, o := range map[string]*server.Options{
		"a shared token": {Authorization: "token"},
		"a single user":  {Username: "u", Password: "p"},
		"users":          {Users: []*server.User{{Username: "u", Password: "p"}}},
		"nkeys":          {Nkeys: []*server.NkeyUser{{Nkey: "U..."}}},
	} {
		if err := testConfig().Apply(o); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: got %v, want %v", name, err, ErrConfig)
		}
	}
	if err := (Config{}).Apply(&server.Options{}); !errors.Is(err, ErrConfig) {
		t.Errorf("an empty config: got %v, want %v", err, ErrConfig)
	}
}
