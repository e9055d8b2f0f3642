package natsauth

import (
	"bytes"
	cryptotls "crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"golang.org/x/crypto/bcrypt"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/protocol"
)

// awkwardSecret holds everything the configuration syntax gives meaning
// to: quotes, escapes, a $variable, comment and block characters,
// control characters and UTF-8.
const awkwardSecret = "q\"uo'te\\back$VAR${x}#c//c;{}[]:=,\t\r\n\x00\x7f é"

// parseConfig writes cfg's configuration and reads it back as nats-server
// does.
func parseConfig(t *testing.T, cfg Config, opts ServerConfigOptions) (*server.Options, string) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteServerConfig(&b, cfg, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejects the configuration: %v\n%s", err, b.String())
	}
	return parsed, b.String()
}

// wantUsers are the identities testConfig with masters m1 and m2 names, and
// each one's secret.
func wantUsers(cfg Config) map[protocol.Identity]string {
	want := map[protocol.Identity]string{
		masterM1:   cfg.MasterSecret,
		masterM2:   cfg.MasterSecret,
		operatorAd: cfg.OperatorToken,
	}
	for name, s := range cfg.Frameworks {
		want[protocol.Identity{Kind: protocol.KindFramework, Name: name}] = s
	}
	for name, s := range cfg.Agents {
		want[protocol.Identity{Kind: protocol.KindAgent, Name: name}] = s
	}
	return want
}

func TestWriteServerConfigReadsBack(t *testing.T) {
	cfg := testConfig()
	cfg.Frameworks["awkward"] = awkwardSecret
	masters := []string{masterM1.Name, masterM2.Name}
	ca := testutil.NewTLSAuthority(t)
	// A path the syntax gives meaning to, to be quoted as well.
	cert := filepath.Join(t.TempDir(), `a "quoted" \ $path #1.pem`)
	data, err := os.ReadFile(ca.Cert)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cert, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		opts ServerConfigOptions
	}{
		{"password", ServerConfigOptions{Masters: masters, Listen: "127.0.0.1:4999"}},
		{"bcrypt", ServerConfigOptions{Masters: masters, Bcrypt: true, BcryptCost: bcrypt.MinCost}},
		{"tls", ServerConfigOptions{Masters: masters, TLSCert: cert, TLSKey: ca.Key, TLSCA: ca.CA}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			parsed, text := parseConfig(t, cfg, mode.opts)
			if !strings.HasPrefix(text, "# nats-server configuration for an allot cluster") {
				t.Errorf("the configuration does not start by saying what it is:\n%s", text)
			}
			tls := mode.opts.TLSCert != ""
			want := wantUsers(cfg)
			if len(parsed.Users) != len(want) {
				t.Fatalf("got %d users, want %d", len(parsed.Users), len(want))
			}
			for _, u := range parsed.Users {
				id, ok := protocol.ParseIdentity(u.Username)
				secret, wanted := want[id]
				if !ok || !wanted {
					t.Fatalf("unexpected user %q", u.Username)
				}
				delete(want, id)
				switch {
				case tls && (u.Username != id.URI() || u.Password != ""):
					t.Errorf("%s: user %q with password %q, want the URI alone", id, u.Username, u.Password)
				case mode.opts.Bcrypt:
					if err := bcrypt.CompareHashAndPassword([]byte(u.Password), []byte(secret)); err != nil {
						t.Errorf("%s: stored hash does not match the secret: %v", id, err)
					}
				case !tls && u.Password != secret:
					t.Errorf("%s: password %q, want %q", id, u.Password, secret)
				}
				if wantPerms := Permissions(testSubjects, id); !reflect.DeepEqual(u.Permissions, wantPerms) {
					t.Errorf("%s: permissions %s, want %s", id, describe(u.Permissions), describe(wantPerms))
				}
			}
			// The files were found (the paths survived quoting) and client
			// certificates are verified, then mapped to users.
			verify := parsed.TLSConfig != nil && parsed.TLSConfig.ClientAuth == cryptotls.RequireAndVerifyClientCert
			if tls != parsed.TLSMap || tls != verify {
				t.Errorf("tls: map %v, verify %v; want %v", parsed.TLSMap, verify, tls)
			}
			if mode.opts.Listen != "" && (parsed.Host != "127.0.0.1" || parsed.Port != 4999) {
				t.Errorf("listen: got %s:%d", parsed.Host, parsed.Port)
			}
		})
	}
}

// describe renders permissions readably for a failure message.
func describe(p *server.Permissions) string {
	if p == nil {
		return "<nil>"
	}
	s, err := confPermissions(p, "")
	if err != nil {
		return err.Error()
	}
	return s
}

// The file and RegisterUser read a zero response limit differently: the
// rendering keeps RegisterUser's "no limit", which the file spells -1.
func TestConfPermissionsKeepsRegisterUserMeaning(t *testing.T) {
	text, err := confPermissions(&server.Permissions{
		Publish:  &server.SubjectPermission{Allow: []string{"a.>"}, Deny: []string{"a.b"}},
		Response: &server.ResponsePermission{},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.conf")
	conf := "authorization { users: [ { user: u, password: p, permissions: " + text + " } ] }\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, conf)
	}
	p := parsed.Users[0].Permissions
	if !reflect.DeepEqual(p.Publish, &server.SubjectPermission{Allow: []string{"a.>"}, Deny: []string{"a.b"}}) {
		t.Errorf("publish: %+v", p.Publish)
	}
	if p.Response == nil || p.Response.MaxMsgs >= 0 || p.Response.Expires >= 0 {
		t.Errorf("responses: %+v, want no limits (negative)", p.Response)
	}

	_, err = confPermissions(&server.Permissions{Publish: &server.SubjectPermission{Allow: []string{}}}, "")
	if !errors.Is(err, ErrConfig) {
		t.Errorf("empty allow list: got %v, want %v", err, ErrConfig)
	}
}

func TestWriteServerConfigRefuses(t *testing.T) {
	masters := []string{"m1"}
	withSecret := func(s string) Config {
		c := testConfig()
		c.Frameworks["x"] = s
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		opts ServerConfigOptions
	}{
		{"no masters", testConfig(), ServerConfigOptions{}},
		{"masters without a secret", func() Config { c := testConfig(); c.MasterSecret = ""; return c }(),
			ServerConfigOptions{Masters: masters}},
		{"operators without a token", func() Config { c := testConfig(); c.OperatorToken = ""; return c }(),
			ServerConfigOptions{Masters: masters, Operators: []string{"alice"}}},
		{"an invalid master name", testConfig(), ServerConfigOptions{Masters: []string{"m.1"}}},
		{"a master named twice", testConfig(), ServerConfigOptions{Masters: []string{"m1", "m1"}}},
		{"an invalid operator name", testConfig(), ServerConfigOptions{Masters: masters, Operators: []string{">"}}},
		{"a TLS certificate without a CA", testConfig(), ServerConfigOptions{Masters: masters, TLSCert: "c", TLSKey: "k"}},
		{"a secret nats-server would read as a hash", withSecret("$2a$10$abcdefghijklmnopqrstuv"), ServerConfigOptions{Masters: masters}},
		{"a secret too long for bcrypt", withSecret(strings.Repeat("s", 73)), ServerConfigOptions{Masters: masters, Bcrypt: true}},
		{"a bcrypt cost out of range", testConfig(), ServerConfigOptions{Masters: masters, Bcrypt: true, BcryptCost: bcrypt.MaxCost + 1}},
		{"an invalid config", Config{}, ServerConfigOptions{Masters: masters}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteServerConfig(&b, tc.cfg, tc.opts)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want %v", err, ErrConfig)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes despite the error", b.Len())
			}
		})
	}
}

// A secret that looks like a hash is fine once hashed.
func TestWriteServerConfigHashesHashLikeSecret(t *testing.T) {
	cfg := testConfig()
	cfg.Frameworks["x"] = "$2a$10$abcdefghijklmnopqrstuv"
	parsed, _ := parseConfig(t, cfg, ServerConfigOptions{Masters: []string{"m1"}, Bcrypt: true, BcryptCost: bcrypt.MinCost})
	for _, u := range parsed.Users {
		if u.Username == "framework.x" {
			if err := bcrypt.CompareHashAndPassword([]byte(u.Password), []byte(cfg.Frameworks["x"])); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no user framework.x")
}
