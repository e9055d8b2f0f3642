package devcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/allot-project/allot/executor"
	"github.com/allot-project/allot/protocol"
)

// Names of the files and directories under the data directory.
const (
	layoutFile = "dev.json"
	lockFile   = "dev.lock"
	mastersDir = "masters"
	agentsDir  = "agents"
)

// layoutVersion is the version of dev.json this package writes and reads.
const layoutVersion = 1

// Layout is what a data directory's cluster is made of, saved as dev.json
// on the first start and reused by every later one.
type Layout struct {
	Version int `json:"version"`
	// NATSAddr is the NATS server's host:port.
	NATSAddr string         `json:"nats_addr"`
	Masters  []MasterLayout `json:"masters"`
	Agents   []AgentLayout  `json:"agents"`
	// FilesSecret is the masters' and agents' files secret: frameworks and
	// their tasks read their sandboxes on every agent with tokens made
	// from it (protocol.FrameworkFilesToken), as the MapReduce shuffle does.
	FilesSecret string `json:"files_secret"`
	// Credentials are the cluster's identities (credentials.go).
	Credentials Credentials `json:"credentials"`
}

// MasterLayout is one master: its permanent Raft node ID, its Raft
// address (the peers know it by that) and its operator API address.
type MasterLayout struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
	HTTPAddr string `json:"http_addr"`
}

// AgentLayout is one agent: its name (and work directory agents/<name>),
// the hostname it registers, its file server's address, its resources and
// its attributes (text values, parsed with protocol.ParseValue).
type AgentLayout struct {
	Name       string             `json:"name"`
	Hostname   string             `json:"hostname"`
	HTTPAddr   string             `json:"http_addr"`
	Resources  protocol.Resources `json:"resources"`
	Attributes map[string]string  `json:"attributes"`
}

// LoadLayout reads the layout saved in dataDir; found is false when the
// directory holds no cluster yet.
func LoadLayout(dataDir string) (l Layout, found bool, err error) {
	data, err := os.ReadFile(filepath.Join(dataDir, layoutFile))
	if errors.Is(err, fs.ErrNotExist) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("%w: %w", ErrLayout, err)
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return l, false, fmt.Errorf("%w: %s: %w", ErrLayout, layoutFile, err)
	}
	if err := l.validate(); err != nil {
		return l, false, err
	}
	return l, true, nil
}

func (l Layout) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrLayout, layoutFile, fmt.Sprintf(format, args...))
	}
	if l.Version != layoutVersion {
		return bad("version %d, want %d", l.Version, layoutVersion)
	}
	if len(l.Masters) != 1 && len(l.Masters) != 3 || len(l.Agents) < 1 {
		return bad("%d masters and %d agents", len(l.Masters), len(l.Agents))
	}
	addrs := []string{l.NATSAddr}
	for _, m := range l.Masters {
		if m.ID == "" {
			return bad("a master without an id")
		}
		addrs = append(addrs, m.RaftAddr, m.HTTPAddr)
	}
	for _, a := range l.Agents {
		if a.Name == "" || a.Name != filepath.Base(a.Name) || a.Name == "." || a.Name == ".." || a.Hostname == "" {
			return bad("agent %q, hostname %q", a.Name, a.Hostname)
		}
		if err := a.Resources.Validate(); err != nil || a.Resources.IsEmpty() {
			return bad("agent %s: resources: %v", a.Name, err)
		}
		addrs = append(addrs, a.HTTPAddr)
	}
	seen := map[string]bool{}
	for _, addr := range addrs {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return bad("address %q: %v", addr, err)
		}
		if seen[addr] {
			return bad("address %s used twice", addr)
		}
		seen[addr] = true
	}
	return nil
}

// save writes the layout to dataDir atomically.
func (l Layout) save(dataDir string) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dataDir, layoutFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, layoutFile))
}

// newLayout chooses the layout of a new cluster from cfg: ports from the
// configured bases, or free ones where a base is 0; resources as
// configured or this machine's divided among the agents.
func newLayout(cfg Config) (Layout, error) {
	l := Layout{Version: layoutVersion, FilesSecret: protocol.NewID("files")}
	var err error
	// Free ports stay held until every one is chosen, so none is chosen
	// twice.
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	port := func(base, i int) (string, error) {
		if base != 0 {
			return net.JoinHostPort(cfg.Host, strconv.Itoa(base+i)), nil
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, "0"))
		if err != nil {
			return "", err
		}
		held = append(held, ln)
		return ln.Addr().String(), nil
	}
	if l.NATSAddr, err = port(cfg.NATSPort, 0); err != nil {
		return l, err
	}
	for i := range cfg.Masters {
		m := MasterLayout{ID: "m" + strconv.Itoa(i+1)}
		if m.RaftAddr, err = port(cfg.RaftPort, i); err != nil {
			return l, err
		}
		if m.HTTPAddr, err = port(cfg.HTTPPort, i); err != nil {
			return l, err
		}
		l.Masters = append(l.Masters, m)
	}
	res, err := agentResources(cfg)
	if err != nil {
		return l, err
	}
	for i := range cfg.Agents {
		a := AgentLayout{
			Name: "a" + strconv.Itoa(i+1), Hostname: "dev-agent-" + strconv.Itoa(i+1),
			Resources: res[i], Attributes: agentAttributes(i),
		}
		if a.HTTPAddr, err = port(cfg.HTTPPort, AgentHTTPOffset+i); err != nil {
			return l, err
		}
		l.Agents = append(l.Agents, a)
	}
	l.Credentials = newCredentials(l.Agents)
	return l, nil
}

// agentAttributes are agent i's (from 0) attributes: racks r1 and r2
// alternate, and every two agents share a zone, so no two agents have the
// same pair and both `unique rack` and `same zone` constraints can be met.
func agentAttributes(i int) map[string]string {
	return map[string]string{
		"hostname": "dev-agent-" + strconv.Itoa(i+1),
		"rack":     "r" + strconv.Itoa(i%2+1),
		"zone":     "z" + strconv.Itoa(i/2+1),
	}
}

// agentResources returns each agent's resources: cfg.AgentResources, or
// this machine's divided among the agents; an agent without ports gets
// its own slice of the default port range.
func agentResources(cfg Config) ([]protocol.Resources, error) {
	base := cfg.AgentResources.Clone()
	if base.IsEmpty() {
		total, err := executor.DetectResources(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		base = protocol.Resources{Scalars: map[string]int64{}}
		for name, v := range total.Scalars {
			if v/int64(cfg.Agents) > 0 {
				base.Scalars[name] = v / int64(cfg.Agents)
			}
		}
	}
	out := make([]protocol.Resources, cfg.Agents)
	width := uint64(executor.DefaultPortsEnd-executor.DefaultPortsBegin+1) / uint64(cfg.Agents)
	for i := range out {
		r := base.Clone()
		if _, ok := r.Ranges[protocol.ResPorts]; !ok && width > 0 {
			if r.Ranges == nil {
				r.Ranges = map[string]protocol.Ranges{}
			}
			lo := uint64(executor.DefaultPortsBegin) + uint64(i)*width
			r.Ranges[protocol.ResPorts] = protocol.Ranges{{Begin: lo, End: lo + width - 1}}
		}
		if err := r.Validate(); err != nil || r.IsEmpty() {
			return nil, fmt.Errorf("%w: agent resources %s: %v", ErrConfig, r, err)
		}
		out[i] = r
	}
	return out, nil
}

// addrs returns every address the layout listens on, with what it is.
func (l Layout) addrs() [][2]string {
	out := [][2]string{{l.NATSAddr, "NATS"}}
	for _, m := range l.Masters {
		out = append(out, [2]string{m.RaftAddr, "master " + m.ID + " Raft"}, [2]string{m.HTTPAddr, "master " + m.ID + " HTTP"})
	}
	for _, a := range l.Agents {
		out = append(out, [2]string{a.HTTPAddr, "agent " + a.Name + " HTTP"})
	}
	return out
}

// checkPorts fails with ErrPortInUse, naming the first address of the
// layout that another process listens on.
func (l Layout) checkPorts() error {
	for _, a := range l.addrs() {
		ln, err := net.Listen("tcp", a[0])
		if err != nil {
			return fmt.Errorf("%w: %s (%s): %v", ErrPortInUse, a[0], a[1], err)
		}
		ln.Close()
	}
	return nil
}
