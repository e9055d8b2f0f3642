package pack

import (
	"embed"
	"io"
	"os"
	"path"
)

// openb holds the openb trace (see data/openb/README.md), embedded so that
// the simulator runs from any directory.
//
//go:embed data/openb/*.csv
var openb embed.FS

// Built-in node lists and workloads, by the names LoadNodes and LoadPods
// accept.
var (
	builtinNodes = map[string]string{
		"gpu": "openb_node_list_gpu_node.csv",
		"all": "openb_node_list_all_node.csv",
	}
	builtinPods = map[string]string{
		"default":   "openb_pod_list_default.csv",
		"gpuspec33": "openb_pod_list_gpuspec33.csv",
	}
)

// LoadNodes returns a built-in node list ("gpu": openb's GPU nodes, "all":
// every openb node) or, for any other name, parses that file.
func LoadNodes(name string) ([]Node, error) {
	var nodes []Node
	err := load(name, builtinNodes, func(r io.Reader, file string) (err error) {
		nodes, err = ParseNodes(r, file)
		return err
	})
	return nodes, err
}

// LoadPods returns a built-in workload ("default": openb's pods,
// "gpuspec33": the same with GPU-model constraints on about a third of the
// GPU pods) or, for any other name, parses that file.
func LoadPods(name string) ([]Pod, error) {
	var pods []Pod
	err := load(name, builtinPods, func(r io.Reader, file string) (err error) {
		pods, err = ParsePods(r, file)
		return err
	})
	return pods, err
}

// load opens name, a built-in file or a path, and hands it to parse.
func load(name string, builtin map[string]string, parse func(io.Reader, string) error) error {
	var (
		f   io.ReadCloser
		err error
	)
	file := name
	if embedded, ok := builtin[name]; ok {
		file = path.Join("data/openb", embedded)
		f, err = openb.Open(file)
	} else {
		f, err = os.Open(name)
	}
	if err != nil {
		return err // a *fs.PathError, which names the file
	}
	defer f.Close()
	return parse(f, file)
}
