// SPDX-License-Identifier: Apache-2.0

package capshim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestMissingNamesTheAbsentBits(t *testing.T) {
	// The mask seen on this project's VMs: everything but CAP_SYS_RESOURCE (bit 24).
	got := Missing(0x000001fffeffffff)
	want := map[string]bool{"CAP_SYS_RESOURCE": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Missing = %v, want %v", got, want)
	}
	if n := len(Missing(0x000001ffffffffff)); n != 0 {
		t.Fatalf("a complete bounding set should miss nothing, got %d", n)
	}
}

func TestFindTarget(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want Target
	}{
		{"create with bundle", []string{"--root", "/run/r", "--log", "l.json", "--log-format", "json", "create", "--bundle", "/b", "--pid-file", "p", "id"},
			Target{Path: "/b/config.json", WholeSpec: true}},
		{"run with -b=", []string{"run", "-b=/x", "id"}, Target{Path: "/x/config.json", WholeSpec: true}},
		{"create in cwd", []string{"--systemd-cgroup", "create", "id"}, Target{Path: "/cwd/config.json", WholeSpec: true}},
		{"exec process file", []string{"--root", "/r", "exec", "--process", "/tmp/proc.json", "--detach", "id"}, Target{Path: "/tmp/proc.json"}},
		{"start touches nothing", []string{"--root", "/r", "start", "id"}, Target{}},
		{"exec without process file", []string{"exec", "id", "sh"}, Target{}},
	}
	for _, c := range cases {
		if got := FindTarget(c.args, "/cwd"); got != c.want {
			t.Errorf("%s: FindTarget = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRewriteStripsOnlyMissingCaps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	spec := `{"ociVersion":"1.0.2","process":{"args":["/sbin/init"],"capabilities":{
		"bounding":["CAP_SYS_ADMIN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE","CAP_KILL"],
		"permitted":["CAP_SYS_ADMIN"]}},"root":{"path":"rootfs"}}`
	if err := os.WriteFile(path, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Rewrite(Target{Path: path, WholeSpec: true}, map[string]bool{"CAP_SYS_RESOURCE": true}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Process struct {
			Args         []string            `json:"args"`
			Capabilities map[string][]string `json:"capabilities"`
		} `json:"process"`
		Root map[string]string `json:"root"`
	}
	raw, _ := os.ReadFile(path)
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"bounding": {"CAP_SYS_ADMIN"}, "effective": {"CAP_KILL"}, "permitted": {"CAP_SYS_ADMIN"}}
	if !reflect.DeepEqual(doc.Process.Capabilities, want) {
		t.Fatalf("capabilities = %v, want %v", doc.Process.Capabilities, want)
	}
	if doc.Root["path"] != "rootfs" || doc.Process.Args[0] != "/sbin/init" {
		t.Fatalf("unrelated fields changed: %s", raw)
	}
}

func TestRewriteLeavesFileAloneWhenNothingIsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "process.json")
	orig := `{"capabilities": {"bounding": ["CAP_KILL"]},   "args": ["sh"]}`
	os.WriteFile(path, []byte(orig), 0o600)
	if err := Rewrite(Target{Path: path}, map[string]bool{"CAP_SYS_RESOURCE": true}); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != orig {
		t.Fatalf("file rewritten although no capability was stripped: %s", raw)
	}
}
