package master

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/allot-project/allot/internal/testutil"
	"github.com/allot-project/allot/master/api"
	"github.com/allot-project/allot/protocol"
)

// httpTestPut puts body with a bearer token and returns the status and body.
func httpTestPut(t *testing.T, url, token, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	code, _, out := httpTestDo(t, req)
	return code, out
}

// TestMaster_SetRoleLimit: the operator puts a quota limit on a nested
// role; offers to its framework stay within it, the role shows it in
// /v1/state, and bad requests are refused without changing anything.
func TestMaster_SetRoleLimit(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	base := "http://" + m.HTTPAddr() + "/v1/roles/"
	code, body := httpTestPut(t, base+"eng/batch", "op", `{"weight": 2, "limit": {"cpus": 300}}`)
	var got api.RoleConfig
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil || got.Weight != 2 || got.Limit.Scalar("cpus") != 300 {
		t.Fatalf("PUT role: %d %s", code, body)
	}
	for _, bad := range []struct {
		path, token, body string
		want              int
	}{
		{"eng/batch", "", `{"limit": {"cpus": 1}}`, http.StatusUnauthorized},
		{"eng/x%20y", "op", `{}`, http.StatusBadRequest},
		{"eng/batch", "op", `{"guarantee": {"cpus": 500}, "limit": {"cpus": 300}}`, http.StatusBadRequest},
		{"eng/batch", "op", `{"guarantee": {"cpus": -1}}`, http.StatusBadRequest},
		{"eng/batch", "op", `{"quota": {}}`, http.StatusBadRequest},
		{"eng/batch", "op", `{"weight": -1}`, http.StatusBadRequest},
		{"eng/batch", "op", `{"limit": {"cpus": -5}}`, http.StatusBadRequest},
	} {
		if code, body := httpTestPut(t, base+bad.path, bad.token, bad.body); code != bad.want {
			t.Errorf("PUT %s %s: %d %s, want %d", bad.path, bad.body, code, body, bad.want)
		}
	}
	if r, ok := m.View().Role("eng/batch"); !ok || r.Weight != 2 || r.Quota == nil || r.Quota.Limit.Scalar("cpus") != 300 {
		t.Fatalf("replicated role after refused requests: %+v", r)
	}

	registerTestAgent(t, nc) // 1 CPU
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "eng/batch", Suppressed: true}, inbox.receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
	o := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	if c := o.Resources.Scalar("cpus"); c != 300 {
		t.Fatalf("offer to eng/batch: %s, want its 300 milli-CPU limit", o.Resources)
	}
	code, _, body = httpTestGet(t, "http://"+m.HTTPAddr()+"/v1/state")
	var st api.State
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/state: %d %v", code, err)
	}
	for _, r := range st.Roles {
		if r.Path == "eng/batch" && (r.Limit == nil || r.Limit.Scalar("cpus") != 300) {
			t.Fatalf("/v1/state role eng/batch: %+v, want limit cpus 300", r)
		}
	}
}

// TestMaster_SetRoleGuarantee: the operator guarantees a role 600 of the
// cluster's 1000 milli-CPUs; while it asks for nothing they are held back,
// so another role's framework is offered only the 400 left, and the
// guarantee shows in /v1/state.
func TestMaster_SetRoleGuarantee(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	code, body := httpTestPut(t, "http://"+m.HTTPAddr()+"/v1/roles/eng", "op", `{"guarantee": {"cpus": 600}}`)
	var got api.RoleConfig
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil || got.Guarantee.Scalar("cpus") != 600 || !got.Limit.IsEmpty() {
		t.Fatalf("PUT role: %d %s", code, body)
	}
	registerTestAgent(t, nc) // 1 CPU
	inbox := &offerInbox{}
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "ops", Suppressed: true}, inbox.receive)
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
	o := inbox.take(t, protocol.OfferFair)[protocol.OfferFair]
	if c := o.Resources.Scalar("cpus"); c != 400 {
		t.Fatalf("offer to ops: %s, want the 400 milli-CPU eng's guarantee leaves", o.Resources)
	}
	code, _, body = httpTestGet(t, "http://"+m.HTTPAddr()+"/v1/state")
	var st api.State
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/state: %d %v", code, err)
	}
	i := slices.IndexFunc(st.Roles, func(r api.Role) bool { return r.Path == "eng" })
	if i < 0 || st.Roles[i].Guarantee == nil || st.Roles[i].Guarantee.Scalar("cpus") != 600 || st.Roles[i].Limit != nil {
		t.Fatalf("/v1/state roles %+v, want eng with guarantee cpus 600 and no limit", st.Roles)
	}
}

// TestMaster_SetRoleOfferConstraints: offer constraints on a role keep its
// frameworks off agents that fail them (the explanation counts the agent
// under the role), show in /v1/state, and a group constraint is refused.
func TestMaster_SetRoleOfferConstraints(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	base := "http://" + m.HTTPAddr()
	code, body := httpTestPut(t, base+"/v1/roles/ml", "op", `{"offer_constraints": [{"attribute": "pool", "op": "==", "value": "gpu"}]}`)
	var got api.RoleConfig
	if err := json.Unmarshal(body, &got); code != http.StatusOK || err != nil || len(got.OfferConstraints) != 1 || got.OfferConstraints[0].Value != "gpu" {
		t.Fatalf("PUT role: %d %s", code, body)
	}
	if code, body := httpTestPut(t, base+"/v1/roles/ml", "op", `{"offer_constraints": [{"attribute": "rack", "op": "unique"}]}`); code != http.StatusBadRequest {
		t.Fatalf("PUT a group constraint: %d %s, want 400", code, body)
	}
	registerTestAgent(t, nc) // no pool attribute
	fw := subscribeTestFramework(t, nc, protocol.SubscribeRequest{Name: "f", Role: "ml/train"}, func(*nats.Msg) {})
	httpTestRequest(t, nc, viaBody, protocol.MsgReviveRequest,
		protocol.ReviveRequest{FrameworkID: fw.FrameworkID}, nil)
	offers := func() (int, error) {
		code, _, body := httpTestGet(t, base+"/v1/frameworks/"+string(fw.FrameworkID)+"/explain")
		var ex api.Explanation
		if err := json.Unmarshal(body, &ex); code != http.StatusOK || err != nil {
			return 0, fmt.Errorf("explain: %d %s", code, body)
		}
		return ex.Offers, nil
	}
	// Allocation runs every 20 ms: fifty rounds make no offer.
	if err := testutil.Poll(time.Second, 20*time.Millisecond, func() error {
		if n, err := offers(); err != nil || n > 0 {
			return fmt.Errorf("%d offers (%v)", n, err)
		}
		return errors.New("none yet")
	}); err == nil || !strings.Contains(err.Error(), "none yet") {
		t.Fatalf("the agent outside ml's constraints was offered: %v", err)
	}
	code, _, body = httpTestGet(t, base+"/v1/state")
	var st api.State
	if err := json.Unmarshal(body, &st); code != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/state: %d %v", code, err)
	}
	i := slices.IndexFunc(st.Roles, func(r api.Role) bool { return r.Path == "ml" })
	if i < 0 || len(st.Roles[i].OfferConstraints) != 1 {
		t.Fatalf("/v1/state roles %+v, want ml with its offer constraint", st.Roles)
	}
	// Without the constraints the agent is offered.
	if code, body := httpTestPut(t, base+"/v1/roles/ml", "op", `{"offer_constraints": []}`); code != http.StatusOK {
		t.Fatalf("PUT role without constraints: %d %s", code, body)
	}
	testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n, err := offers(); err != nil || n == 0 {
			return fmt.Errorf("%d offers (%v)", n, err)
		}
		return nil
	})
}

// TestMaster_SetRolePartial: a PUT keeps what its body leaves out and
// removes what it gives empty; a guarantee beyond what the agents hold is
// set with a warning.
func TestMaster_SetRolePartial(t *testing.T) {
	t.Parallel()
	m, nc := operatorTestMaster(t, "op")
	registerTestAgent(t, nc) // 1 CPU
	url := "http://" + m.HTTPAddr() + "/v1/roles/eng"
	put := func(body string) api.RoleConfig {
		t.Helper()
		code, out := httpTestPut(t, url, "op", body)
		var rc api.RoleConfig
		if err := json.Unmarshal(out, &rc); code != http.StatusOK || err != nil {
			t.Fatalf("PUT %s: %d %s", body, code, out)
		}
		return rc
	}
	put(`{"weight": 2, "guarantee": {"cpus": 500}, "limit": {"cpus": 800}, "preemption": "off", "offer_constraints": [{"attribute": "rack", "op": "==", "value": "r1"}]}`)
	rc := put(`{"weight": 3}`)
	if rc.Weight != 3 || rc.Guarantee.Scalar("cpus") != 500 || rc.Limit.Scalar("cpus") != 800 || rc.Preemption != "off" || len(rc.OfferConstraints) != 1 {
		t.Fatalf("after a PUT of the weight alone: %+v, want the rest kept", rc)
	}
	rc = put(`{"guarantee": {}}`)
	if rc.Weight != 3 || len(rc.Guarantee.Scalars) != 0 || rc.Limit.Scalar("cpus") != 800 {
		t.Fatalf("after a PUT of an empty guarantee: %+v, want it removed and the limit kept", rc)
	}
	rc = put(`{"preemption": "inherit", "offer_constraints": []}`)
	if rc.Preemption != "" || len(rc.OfferConstraints) != 0 || rc.Limit.Scalar("cpus") != 800 {
		t.Fatalf("after inherit and no constraints: %+v", rc)
	}
	if r, ok := m.View().Role("eng"); !ok || r.Weight != 3 || r.Quota == nil || r.Quota.Limit.Scalar("cpus") != 800 || len(r.Quota.Guarantee.Scalars) != 0 {
		t.Fatalf("replicated role: %+v", r)
	}
	if rc := put(`{"guarantee": {"cpus": 700}}`); len(rc.Warnings) != 0 {
		t.Fatalf("a guarantee the agent holds: warnings %v", rc.Warnings)
	}
	rc = put(`{"guarantee": {"cpus": 5000}, "limit": {}}`)
	if len(rc.Warnings) != 1 || !strings.Contains(rc.Warnings[0], "guarantee cpus 5000 exceeds the 1000") || rc.Guarantee.Scalar("cpus") != 5000 {
		t.Fatalf("a guarantee beyond the cluster: %+v, want it set with one warning", rc)
	}
}
