// SPDX-License-Identifier: Apache-2.0

package cdi

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

func TestOrdinaryAndAdminDevicesCarryTheirAccess(t *testing.T) {
	w := Writer{Dir: t.TempDir(), Vendor: "testdriver.example.com"}
	ids, err := w.Write("uid-1", []Device{{Name: "dev-0"}, {Name: "dev-1", AdminAccess: true, ExtraEnv: map[string]string{"B": "2", "A": "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{"testdriver.example.com/device=uid-1-dev-0", "testdriver.example.com/device=uid-1-dev-1"}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Fatalf("ids %v", ids)
	}
	raw, err := os.ReadFile(w.Path("uid-1"))
	if err != nil {
		t.Fatal(err)
	}
	var spec Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Kind != "testdriver.example.com/device" || spec.CDIVersion != Version {
		t.Fatalf("spec header %+v", spec)
	}
	want := [][]string{
		{"DRA_DEVICE_DEV_0=uid-1", "DRA_ADMIN_ACCESS=false", "DRA_CLAIM_UID=uid-1"},
		{"DRA_DEVICE_DEV_1=uid-1", "DRA_ADMIN_ACCESS=true", "DRA_CLAIM_UID=uid-1", "A=1", "B=2"},
	}
	for i, d := range spec.Devices {
		if !reflect.DeepEqual(d.ContainerEdits.Env, want[i]) {
			t.Errorf("device %d env %v, want %v", i, d.ContainerEdits.Env, want[i])
		}
	}
}

func TestRemoveIsIdempotent(t *testing.T) {
	w := Writer{Dir: t.TempDir(), Vendor: "v.example.com"}
	if _, err := w.Write("u", []Device{{Name: "d"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("u"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Path("u")); !os.IsNotExist(err) {
		t.Fatal("spec file still there")
	}
	if err := w.Remove("u"); err != nil {
		t.Fatalf("second remove: %v", err)
	}
}
