package protocol

import (
	"errors"
	"testing"
)

func TestIngressRequest_Validate(t *testing.T) {
	t.Parallel()
	ok := IngressRequest{FrameworkID: "fw-1", CoflowID: "cf-1", Src: "ag-1", Dst: "ag-2", Transfer: 1, Bytes: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	done := ok
	done.Bytes, done.Done = 0, true
	if err := done.Validate(); err != nil {
		t.Fatalf("valid done: %v", err)
	}
	for name, mutate := range map[string]func(*IngressRequest){
		"no framework":    func(r *IngressRequest) { r.FrameworkID = "" },
		"bad coflow":      func(r *IngressRequest) { r.CoflowID = "a b" },
		"no src":          func(r *IngressRequest) { r.Src = "" },
		"bad dst":         func(r *IngressRequest) { r.Dst = "x\x00" },
		"zero bytes":      func(r *IngressRequest) { r.Bytes = 0 },
		"negative bytes":  func(r *IngressRequest) { r.Bytes = -1 },
		"chunk too large": func(r *IngressRequest) { r.Bytes = MaxIngressChunk + 1 },
		"done with bytes": func(r *IngressRequest) { r.Done = true },
	} {
		r := ok
		mutate(&r)
		if err := r.Validate(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: got %v, want %v", name, err, ErrInvalidArgument)
		}
	}
}
