// SPDX-License-Identifier: Apache-2.0

package state

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCheckpointSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "checkpoint.json")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	pc := PreparedClaim{Namespace: "ns", Name: "c", Devices: []PreparedDevice{{Request: "r", Pool: "node-1", Device: "dev-0", AdminAccess: true, CDIDeviceIDs: []string{"v/device=u-dev-0"}}}}
	if err := c.Put("u1", pc); err != nil {
		t.Fatal(err)
	}
	// A new process (a restarted plugin pod) reads what the old one prepared.
	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := again.Get("u1")
	if !ok || !reflect.DeepEqual(got, pc) {
		t.Fatalf("got %+v %v", got, ok)
	}
	if err := again.Delete("u1"); err != nil {
		t.Fatal(err)
	}
	if err := again.Delete("u1"); err != nil {
		t.Fatalf("deleting twice must be fine: %v", err)
	}
	third, _ := Open(path)
	if len(third.UIDs()) != 0 {
		t.Fatalf("deleted claim came back: %v", third.UIDs())
	}
}

func TestExclusiveHolderIgnoresAdminAccess(t *testing.T) {
	c, _ := Open(filepath.Join(t.TempDir(), "cp.json"))
	c.Put("admin", PreparedClaim{Devices: []PreparedDevice{{Pool: "p", Device: "d0", AdminAccess: true}}})
	if uid, held := c.ExclusiveHolder("p", "d0", "new"); held {
		t.Fatalf("an admin-access holder must not block others, got %s", uid)
	}
	c.Put("ordinary", PreparedClaim{Devices: []PreparedDevice{{Pool: "p", Device: "d0"}}})
	if uid, held := c.ExclusiveHolder("p", "d0", "new"); !held || uid != "ordinary" {
		t.Fatalf("want ordinary holder, got %q %v", uid, held)
	}
	if _, held := c.ExclusiveHolder("p", "d0", "ordinary"); held {
		t.Fatal("a claim does not conflict with itself")
	}
}

func TestCorruptCheckpointIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp.json")
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := Open(path); err == nil {
		t.Fatal("want error")
	}
	os.WriteFile(path, []byte(`{"version": 9}`), 0o600)
	if _, err := Open(path); err == nil {
		t.Fatal("want error for unknown version")
	}
}
