// SPDX-License-Identifier: Apache-2.0

package contract

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/specfiles"
)

func TestWorkloadOutputRoundTrips(t *testing.T) {
	environ := []string{"PATH=/bin", AdminAccessEnv + "=true", DeviceEnv("dev-0") + "=uid-1", ClaimUIDEnv + "=uid-1", "HOME=/"}
	out := WorkloadOutput(environ)
	if out[len(out)-1] != ReadyLine || len(out) != 4 {
		t.Fatalf("output %v", out)
	}
	env, ready, err := ParseOutput("noise\n" + strings.Join(out, "\n") + "\n")
	want := map[string]string{"DRA_ADMIN_ACCESS": "true", "DRA_DEVICE_DEV_0": "uid-1", "DRA_CLAIM_UID": "uid-1"}
	if err != nil || !ready || !reflect.DeepEqual(env, want) {
		t.Fatalf("parsed %v ready %t err %v, want %v", env, ready, err, want)
	}
	if _, ready, _ := ParseOutput("DRA_X=1\n"); ready {
		t.Fatal("not ready before the ready line")
	}
}

func TestDeviceEnvNames(t *testing.T) {
	if got := DeviceEnv("gpu.0-a"); got != "DRA_DEVICE_GPU_0_A" {
		t.Fatalf("DeviceEnv = %q", got)
	}
	if AdminAccessValue(false) != "false" {
		t.Fatal("AdminAccessValue(false)")
	}
}

// The specs read the driver's contract from this package only: a name spelt
// out in a spec would drift silently the day the driver changes it.
func TestSpecsSpellNoContractLiteral(t *testing.T) {
	files, err := specfiles.Read()
	if err != nil {
		t.Fatal(err)
	}
	for f, data := range files {
		for _, literal := range []string{`"DRA_`, `"dev-`, `"` + ReadyLine} {
			if strings.Contains(data, literal) {
				t.Errorf("%s spells %s...: use package contract", f, literal)
			}
		}
	}
}

func TestParseLayout(t *testing.T) {
	for _, l := range Layouts {
		if got, err := ParseLayout(string(l)); err != nil || got != l {
			t.Errorf("ParseLayout(%q) = %q, %v", l, got, err)
		}
	}
	if _, err := ParseLayout("halves"); err == nil || !strings.Contains(err.Error(), `unknown device layout "halves"`) {
		t.Errorf("an unknown layout must be refused by name, got %v", err)
	}
}

func TestParseTaintsRoundTripsAndRefusesWhatTheAPIWouldNot(t *testing.T) {
	got, err := ParseTaints("noschedule-0=NoExecute, dev-1=NoSchedule")
	if err != nil || len(got) != 2 || got["noschedule-0"] != "NoExecute" || got["dev-1"] != "NoSchedule" {
		t.Fatalf("ParseTaints: %v %v", got, err)
	}
	if s := got.String(); s != "dev-1=NoSchedule,noschedule-0=NoExecute" {
		t.Errorf("String: %q", s)
	}
	if none, err := ParseTaints(""); err != nil || len(none) != 0 || none.String() != "" {
		t.Errorf("empty: %v %v", none, err)
	}
	for _, bad := range []string{"dev-0", "=NoExecute", "dev-0=Evict"} {
		if _, err := ParseTaints(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
