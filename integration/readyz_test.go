package integration

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/allot-project/allot/internal/testcluster"
	"github.com/allot-project/allot/internal/testutil"
)

// probe GETs path on a master's HTTP address: its status and body.
func probe(addr, path string) (int, string, error) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), nil
}

// TestMaster_Readyz: every master of a healthy trio is ready; a follower
// cut off from the others stays alive (/healthz) but is not ready
// (/readyz, with the reason) while the majority stays ready, and is ready
// again once it rejoins.
func TestMaster_Readyz(t *testing.T) {
	t.Parallel()
	c := testcluster.New(t, testcluster.Options{Masters: 3})
	leader := c.WaitForLeader()
	addrs := c.HTTPAddrs()
	ready := func(i int) error {
		code, body, err := probe(addrs[i], "/readyz")
		if err != nil || code != http.StatusOK || body != "ready" {
			return fmt.Errorf("master %d /readyz: %d %q %v", i, code, body, err)
		}
		return nil
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for i := range addrs {
			if err := ready(i); err != nil {
				return err
			}
		}
		return nil
	})
	cut := 0
	for i := range addrs {
		if c.NodeID(i) != leader.ID() {
			cut = i
			break
		}
	}
	c.Partition(cut)
	var reason string
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		code, body, err := probe(addrs[cut], "/readyz")
		if err != nil || code != http.StatusServiceUnavailable || body == "" {
			return fmt.Errorf("cut-off master /readyz: %d %q %v, want 503 with a reason", code, body, err)
		}
		reason = body
		return nil
	})
	t.Logf("the cut-off master is not ready: %s", reason)
	if code, body, err := probe(addrs[cut], "/healthz"); err != nil || code != http.StatusOK {
		t.Errorf("cut-off master /healthz: %d %q %v, want 200: it is alive", code, body, err)
	}
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		for i := range addrs {
			if i != cut {
				if err := ready(i); err != nil {
					return err
				}
			}
		}
		return nil
	})
	c.Heal()
	testutil.WaitFor(t, 15*time.Second, 10*time.Millisecond, func() error { return ready(cut) })
}
