// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"sort"
	"strconv"
	"strings"
)

// ADMIN_CHECK is a vendor's own command, run in a container given devices
// with admin access. For its exit code to be evidence a vendor can sign,
// it must be able to check the very devices the allocation gave that
// container (nvidia-smi -i "$DRA_DEVICE_ATTR_UUID"), not any device of the
// node. The suite reads them from the claim's allocation and the driver's
// ResourceSlices and puts them in the command's environment.

// GivenDevice is a device a container was given with admin access.
type GivenDevice struct {
	Driver, Pool, Name string
	// Claim and Request are the claim (its name, in the pod's namespace)
	// and the request of the allocation result that gave it.
	Claim, Request string
	// Attributes are the device's attributes by the name its ResourceSlice
	// gives them ("model", "gpu.example.com/uuid"), values as strings.
	Attributes map[string]string
}

// EnvVar is one variable of ADMIN_CHECK's environment.
type EnvVar struct{ Name, Value string }

// AdminCheckEnv is ADMIN_CHECK's environment for the devices a container
// was given: DRA_DEVICE_COUNT; DRA_DEVICE_DRIVER, _POOL, _NAME, _CLAIM,
// _REQUEST and DRA_DEVICE_ATTR_<NAME> of the first device; and the same
// of each device i (from 0) as DRA_DEVICE_<i>_DRIVER … DRA_DEVICE_<i>_ATTR_<NAME>.
func AdminCheckEnv(devices []GivenDevice) []EnvVar {
	out := []EnvVar{{"DRA_DEVICE_COUNT", strconv.Itoa(len(devices))}}
	if len(devices) > 0 {
		out = append(out, deviceEnv("DRA_DEVICE_", devices[0])...)
	}
	for i, d := range devices {
		out = append(out, deviceEnv("DRA_DEVICE_"+strconv.Itoa(i)+"_", d)...)
	}
	return out
}

// deviceEnv is one device's variables, each name after prefix; where two
// attributes map to one variable, the first by attribute name keeps it.
func deviceEnv(prefix string, d GivenDevice) []EnvVar {
	out := []EnvVar{{prefix + "DRIVER", d.Driver}, {prefix + "POOL", d.Pool}, {prefix + "NAME", d.Name},
		{prefix + "CLAIM", d.Claim}, {prefix + "REQUEST", d.Request}}
	var names []string
	for n := range d.Attributes {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, n := range names {
		v := prefix + "ATTR_" + AttributeEnvName(d.Driver, n)
		if !seen[v] {
			seen[v] = true
			out = append(out, EnvVar{v, d.Attributes[n]})
		}
	}
	return out
}

// AttributeEnvName is the variable name part of a device attribute: its
// name upper-cased with each character other than A-Z and 0-9 as '_'. The
// driver's own domain is dropped ("gpu.example.com/uuid" of driver
// gpu.example.com, like the unqualified "uuid", is UUID), since a check is
// written for its own driver; another domain stays, so that it cannot pass
// for the driver's attribute ("resource.kubernetes.io/pcieRoot" is
// RESOURCE_KUBERNETES_IO_PCIEROOT).
func AttributeEnvName(driver, attribute string) string {
	if domain, name, ok := strings.Cut(attribute, "/"); ok && domain == driver {
		attribute = name
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, attribute)
}

// WithEnv is command run by sh -c (as Exec runs it) with vars exported
// first: "export K='v' …; command". Each value is single-quoted, so that
// nothing in it (quotes, $, ;, newlines) is read by the shell.
func WithEnv(vars []EnvVar, command string) string {
	if len(vars) == 0 {
		return command
	}
	var b strings.Builder
	b.WriteString("export")
	for _, v := range vars {
		b.WriteString(" " + v.Name + "=" + shellQuote(v.Value))
	}
	b.WriteString("; " + command)
	return b.String()
}

// shellQuote is s as one single-quoted shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
