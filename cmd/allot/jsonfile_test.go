package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Errors in JSON files name the file, the line and column, and the key.
func TestDecodeJSONFile_saysWhere(t *testing.T) {
	t.Parallel()
	type settings struct {
		Name  string         `json:"name"`
		Count int            `json:"count"`
		Roles map[string]int `json:"roles"`
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		body, want string
	}{
		{"{\n  \"name\": \"a\",\n  \"count\": 2,\n}\n", "f.json:4:1: invalid character '}'"},
		{"{\n  \"name\": \"a\",\n  \"count\": \"two\"\n}\n", `f.json:3:16: key "count": want int, got string`},
		{"{\n  \"name\": \"a\",\n  \"cuont\": 2\n}\n", `f.json:3:3: unknown key "cuont"`},
		{"{\"roles\": {\"eng\": 1.5}}", `f.json:1:21: key "roles": want int, got number 1.5`},
		{"{} {}", "f.json:1:4: more after the JSON value"},
		{"", "f.json: empty, want a JSON object"},
	} {
		path := filepath.Join(dir, "f.json")
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		var s settings
		err := decodeJSONFile(path, &s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decode %q: %v, want %q", tc.body, err, tc.want)
		}
	}
	path := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(path, []byte(`{"name": "a", "count": 2, "roles": {"eng": 3}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var s settings
	if err := decodeJSONFile(path, &s); err != nil || s.Name != "a" || s.Count != 2 || s.Roles["eng"] != 3 {
		t.Fatalf("decode a good file: %+v, %v", s, err)
	}
}

// allot master with a bad --config fails before starting, naming the file
// and the position.
func TestMaster_badConfigFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "master.json")
	if err := os.WriteFile(path, []byte("{\n  \"node_id\": \"m1\",\n  \"nodeid\": \"m2\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runAllot(t, "", "master", "--config", path)
	if code != 1 || !strings.Contains(errOut, path+":3:") || !strings.Contains(errOut, "unknown key") {
		t.Fatalf("allot master --config with an unknown key: exit %d, %q", code, errOut)
	}
}
