package framework

import "testing"

func TestCredentialsFromEnv(t *testing.T) {
	t.Setenv(EnvPrincipal, "analytics")
	t.Setenv(EnvSecret, "s3cret")
	cfg := defaultConfig()
	for _, o := range CredentialsFromEnv() {
		if err := o(&cfg); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.principal != "analytics" || cfg.secret != "s3cret" {
		t.Fatalf("principal %q secret %q, want analytics and s3cret", cfg.principal, cfg.secret)
	}
	t.Setenv(EnvPrincipal, "")
	t.Setenv(EnvSecret, "")
	if n := len(CredentialsFromEnv()); n != 0 {
		t.Fatalf("%d options with the variables empty, want 0", n)
	}
}
