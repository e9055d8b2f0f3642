package files

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// handler serves the endpoints; it holds no mutable state, so it serves
// requests concurrently.
type handler struct {
	root    string
	token   [sha256.Size]byte // compared as digests, so the length leaks nothing
	secret  string            // framework tokens' key; empty admits none
	maxRead int64
	shuffle Shuffle // nil: downloads are not ordered
	logger  hclog.Logger
	routes  map[string]route
}

// route is one endpoint: the methods it accepts and what serves it. serve
// returns an error only before it has written anything.
type route struct {
	methods []string
	serve   func(http.ResponseWriter, *http.Request) *apiError
}

var _ http.Handler = (*handler)(nil)

// NewHandler returns the handler for cfg's sandboxes. It fails if cfg is
// invalid or its root is not a directory. The handler routes on the full
// request path (/v1/files/...), so it can be mounted as is on a mux under
// "/v1/files/"; it serves requests concurrently and starts no goroutine.
func NewHandler(cfg Config) (http.Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("files root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: root %s is not a directory", ErrConfig, cfg.Root)
	}
	if cfg.MaxRead == 0 {
		cfg.MaxRead = DefaultMaxRead
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	h := &handler{
		root:    cfg.Root,
		token:   sha256.Sum256([]byte(cfg.Token)),
		secret:  cfg.Secret,
		maxRead: cfg.MaxRead,
		shuffle: cfg.Shuffle,
		logger:  cfg.Logger.Named("files"),
	}
	get := []string{http.MethodGet}
	h.routes = map[string]route{
		"/v1/files/list":     {get, h.serveList},
		"/v1/files/read":     {get, h.serveRead},
		"/v1/files/download": {[]string{http.MethodGet, http.MethodHead}, h.serveDownload},
		"/v1/files/tail":     {get, h.serveTail},
	}
	return h, nil
}

// ServeHTTP checks the token first, so a client without it learns nothing,
// not even which endpoints exist; then the endpoint and the method.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	framework, ok := h.authorized(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="allot-files"`)
		h.refuse(w, r, &apiError{status: http.StatusUnauthorized, code: CodeUnauthorized, msg: "missing or invalid token"})
		return
	}
	if framework != "" {
		// A framework token reads that framework's sandboxes only.
		name, e := sandboxPath(r.URL.Query().Get("path"))
		if e == nil && !inScope(framework, name) {
			e = &apiError{status: http.StatusForbidden, code: CodeForbidden, msg: "the token does not cover this path"}
		}
		if e != nil {
			h.refuse(w, r, e)
			return
		}
		r = withTokenFramework(r, framework)
	}
	rt, ok := h.routes[r.URL.Path]
	if !ok {
		h.refuse(w, r, &apiError{status: http.StatusNotFound, code: CodeNotFound, msg: "unknown endpoint"})
		return
	}
	if !slices.Contains(rt.methods, r.Method) {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		h.refuse(w, r, &apiError{status: http.StatusMethodNotAllowed, code: CodeMethodNotAllowed, msg: "method " + r.Method + " not allowed"})
		return
	}
	if e := rt.serve(w, r); e != nil {
		h.refuse(w, r, e)
	}
}

// authorized reports whether r carries a valid token, in the
// Authorization header or else in the token query parameter, and for a
// framework token the framework it is limited to ("" for the agent's own
// token, which reads everything).
func (h *handler) authorized(r *http.Request) (framework string, ok bool) {
	got, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		got = r.URL.Query().Get("token")
	}
	if got == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte(got))
	if subtle.ConstantTimeCompare(sum[:], h.token[:]) == 1 {
		return "", true
	}
	return frameworkOf(h.secret, got)
}

// bearerToken extracts the token of an "Authorization: Bearer" header.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// refuse logs e and answers with it: refusals that look like probing (bad
// token, escaping path) at warn, server failures at error, the rest at
// debug. The URL is not logged, since its query may carry the token.
func (h *handler) refuse(w http.ResponseWriter, r *http.Request, e *apiError) {
	kv := []any{
		"endpoint", r.URL.Path, "method", r.Method, "path", r.URL.Query().Get("path"),
		"remote_addr", r.RemoteAddr, "status", e.status, "error", e.Error(),
	}
	switch {
	case e.code == CodeUnavailable:
		h.logger.Debug("request refused", kv...) // the agent is stopping: expected
	case e.status >= http.StatusInternalServerError:
		h.logger.Error("request failed", kv...)
	case e.code == CodeUnauthorized || e.code == CodePathEscape:
		h.logger.Warn("request refused", kv...)
	default:
		h.logger.Debug("request refused", kv...)
	}
	writeError(w, e)
}
