package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets tests run the real binary: with ALLOT_TEST_MAIN set, the
// test executable behaves as allot itself.
func TestMain(m *testing.M) {
	if os.Getenv("ALLOT_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runAllot(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runAllotEnv(t, nil, stdin, args...)
}

// runAllotEnv is runAllot with env added to the environment.
func runAllotEnv(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := allotCommand(env, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// allotCommand is this test binary run as allot with args, env added.
func allotCommand(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "ALLOT_TEST_MAIN=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0"), env...)
	return cmd
}

func TestSimHDRF_Figure4FromFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		want   map[string]int64
	}{
		{"static", map[string]int64{"n1.1": 5, "n2.1": 5, "n2.2": 10}},
		{"dynamic", map[string]int64{"n1.1": 5, "n2.1": 5, "n2.2": 10}},
		{"naive", map[string]int64{"n1.1": 10, "n2.1": 0, "n2.2": 10}},
	} {
		out, errOut, code := runAllot(t, "", "sim", "hdrf", "--policy", tc.policy,
			"--scenario", "../../examples/scenarios/figure4.json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.policy, code, errOut)
		}
		var res struct {
			Policy string `json:"policy"`
			Leaves map[string]struct {
				Tasks  int64              `json:"tasks"`
				Shares map[string]float64 `json:"shares"`
			} `json:"leaves"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: output is not JSON: %v\n%s", tc.policy, err, out)
		}
		for leaf, want := range tc.want {
			if got := res.Leaves[leaf].Tasks; got != want {
				t.Errorf("%s %s: got %d tasks, want %d", tc.policy, leaf, got, want)
			}
		}
	}
}

func TestSimHDRF_BadInputExitsNonZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"unknown policy", "", []string{"sim", "hdrf", "--policy", "fifo", "--scenario", "../../examples/scenarios/figure4.json"}},
		{"malformed stdin", "{", []string{"sim", "hdrf", "--scenario", "-"}},
		{"missing file", "", []string{"sim", "hdrf", "--scenario", "/nonexistent/scenario.json"}},
		{"no scenario", "", []string{"sim", "hdrf"}},
		{"leaf without demand", `{"capacity": {"cpus": 1}, "root": {"name": "r", "children": [{"name": "a"}]}}`,
			[]string{"sim", "hdrf", "--scenario", "-"}},
	} {
		_, errOut, code := runAllot(t, tc.stdin, tc.args...)
		if code == 0 {
			t.Errorf("%s: exit 0, want non-zero", tc.name)
		}
		if lines := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; lines != 1 || errOut == "" {
			t.Errorf("%s: got %d lines on stderr, want one: %q", tc.name, lines, errOut)
		}
	}
}

// The CLI refuses what it cannot run with a reason and the usage, and
// says where it looked for masters when none is listening.
func TestCLI_refusesClearly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "list"}, "allot agents list"},
		{[]string{"operator", "raft", "list"}, `unknown command "list" for "allot operator raft" (its commands: add-peer, list-peers, remove-peer)`},
		{[]string{"tasks", "logs"}, "usage: allot tasks logs FRAMEWORK_ID TASK_ID"},
		{[]string{"status", "--masters=127.0.0.1:1"}, "no master is listening at http://127.0.0.1:1 (connection refused); are the masters running there? Name them with --masters or $ALLOT_MASTERS"},
	} {
		_, errOut, code := runAllot(t, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("allot %s: exit %d, stderr %q; want exit 1 and one line containing %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
	if out, errOut, code := runAllot(t, "", "--version"); code != 0 || !strings.HasPrefix(out, "allot version ") {
		t.Errorf("allot --version: exit %d, %q %q", code, out, errOut)
	}
	if out, _, code := runAllot(t, "", "operator", "raft"); code != 0 || !strings.Contains(out, "list-peers") {
		t.Errorf("allot operator raft (no command): exit %d, %q; want its help", code, out)
	}
}
