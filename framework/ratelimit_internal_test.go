package framework

import (
	"fmt"
	"testing"

	"github.com/allot-project/allot/protocol"
)

// A rate-limited call is retried by the calls that may repeat, and is not
// taken for one that may have been applied.
func TestRateLimitedIsRetryableNotAmbiguous(t *testing.T) {
	err := fmt.Errorf("accept: %w", protocol.ErrRateLimited)
	if !retryable(err) {
		t.Error("a rate-limited call is not retried")
	}
	if ambiguous(err) {
		t.Error("a rate-limited call is taken for one that may have been applied")
	}
	if !ambiguous(fmt.Errorf("accept: %w", protocol.ErrTimeout)) {
		t.Error("a timed-out accept is not ambiguous")
	}
}
