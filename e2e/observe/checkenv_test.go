// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// The driver's domain goes, another domain stays; every other character
// becomes '_'.
func TestAttributeEnvName(t *testing.T) {
	for _, c := range []struct{ attribute, want string }{
		{"gpu.example.com/uuid", "UUID"},
		{"uuid", "UUID"},
		{"gpu.example.com/driver-version", "DRIVER_VERSION"},
		{"resource.kubernetes.io/pcieRoot", "RESOURCE_KUBERNETES_IO_PCIEROOT"},
		{"example.com/uuid", "EXAMPLE_COM_UUID"}, // a suffix of the driver's domain is another domain
	} {
		if got := AttributeEnvName("gpu.example.com", c.attribute); got != c.want {
			t.Errorf("AttributeEnvName(%q) = %q, want %q", c.attribute, got, c.want)
		}
	}
}

func TestAdminCheckEnv(t *testing.T) {
	devices := []GivenDevice{
		{Driver: "gpu.example.com", Pool: "node-a", Name: "gpu-1", Claim: "admin", Request: "req-0",
			Attributes: map[string]string{"gpu.example.com/uuid": "GPU-1", "resource.kubernetes.io/pcieRoot": "pci0", "uuid": "shadowed"}},
		{Driver: "gpu.example.com", Pool: "node-a", Name: "gpu-0", Claim: "admin", Request: "req-0/sub-1"},
	}
	want := []EnvVar{
		{"DRA_DEVICE_COUNT", "2"},
		{"DRA_DEVICE_DRIVER", "gpu.example.com"}, {"DRA_DEVICE_POOL", "node-a"}, {"DRA_DEVICE_NAME", "gpu-1"},
		{"DRA_DEVICE_CLAIM", "admin"}, {"DRA_DEVICE_REQUEST", "req-0"},
		{"DRA_DEVICE_ATTR_UUID", "GPU-1"}, {"DRA_DEVICE_ATTR_RESOURCE_KUBERNETES_IO_PCIEROOT", "pci0"},
		{"DRA_DEVICE_0_DRIVER", "gpu.example.com"}, {"DRA_DEVICE_0_POOL", "node-a"}, {"DRA_DEVICE_0_NAME", "gpu-1"},
		{"DRA_DEVICE_0_CLAIM", "admin"}, {"DRA_DEVICE_0_REQUEST", "req-0"},
		{"DRA_DEVICE_0_ATTR_UUID", "GPU-1"}, {"DRA_DEVICE_0_ATTR_RESOURCE_KUBERNETES_IO_PCIEROOT", "pci0"},
		{"DRA_DEVICE_1_DRIVER", "gpu.example.com"}, {"DRA_DEVICE_1_POOL", "node-a"}, {"DRA_DEVICE_1_NAME", "gpu-0"},
		{"DRA_DEVICE_1_CLAIM", "admin"}, {"DRA_DEVICE_1_REQUEST", "req-0/sub-1"},
	}
	if got := AdminCheckEnv(devices); !reflect.DeepEqual(got, want) {
		t.Errorf("AdminCheckEnv:\n got %v\nwant %v", got, want)
	}
	if got := AdminCheckEnv(nil); !reflect.DeepEqual(got, []EnvVar{{"DRA_DEVICE_COUNT", "0"}}) {
		t.Errorf("no devices: %v", got)
	}
}

// What the shell reads back is the value as given, whatever it holds.
func TestWithEnvQuotes(t *testing.T) {
	if got := WithEnv(nil, "true"); got != "true" {
		t.Errorf("no variables: %q", got)
	}
	vars := []EnvVar{{"A", `it's "$HOME" ; exit 1`}, {"B", "two\nlines `x` \\"}, {"C", ""}}
	cmd := WithEnv(vars, `printf '%s|%s|%s' "$A" "$B" "$C"`)
	if !strings.HasPrefix(cmd, "export A='it'\\''s ") {
		t.Errorf("WithEnv = %q", cmd)
	}
	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("sh -c %q: %v: %s", cmd, err, out)
	}
	if want := vars[0].Value + "|" + vars[1].Value + "|"; string(out) != want {
		t.Errorf("sh read %q, want %q", out, want)
	}
}
