// Package contract is what the bundled test driver promises a pod, in one
// place: the environment variables its CDI specs give a container, and the
// output of the workload program the suite's pods run. The driver, the
// workload and the specs import it; none spells these names itself.
package contract

import (
	"bufio"
	"sort"
	"strconv"
	"strings"
)

// EnvPrefix starts every variable the driver sets.
const EnvPrefix = "DRA_"

// AdminAccessEnv says, inside the container, whether the claim was granted
// admin access: "true" or "false", from the allocation result.
const AdminAccessEnv = EnvPrefix + "ADMIN_ACCESS"

// ClaimUIDEnv names the claim the device was prepared for.
const ClaimUIDEnv = EnvPrefix + "CLAIM_UID"

// deviceEnvPrefix starts the variable naming a device (DeviceEnv).
const deviceEnvPrefix = EnvPrefix + "DEVICE_"

// DeviceEnv is the variable naming a device: DRA_DEVICE_<NAME>=<claim UID>,
// the name upper-cased with anything but letters and digits as "_".
func DeviceEnv(device string) string {
	return deviceEnvPrefix + strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, strings.ToUpper(device))
}

// DeviceName is the name of the driver's i-th device on every node; its
// "index" attribute is i.
func DeviceName(i int) string { return "dev-" + strconv.Itoa(i) }

// AdminAccessValue is AdminAccessEnv's value for a grant.
func AdminAccessValue(granted bool) string { return strconv.FormatBool(granted) }

// ReadyLine is the workload's last line once it has printed its variables.
const ReadyLine = "workload: ready"

// WorkloadOutput is what the workload prints for an environment (os.Environ
// form): the driver's variables, sorted, one per line, then ReadyLine.
func WorkloadOutput(environ []string) []string {
	var lines []string
	for _, kv := range environ {
		if strings.HasPrefix(kv, EnvPrefix) {
			lines = append(lines, kv)
		}
	}
	sort.Strings(lines)
	return append(lines, ReadyLine)
}

// ParseOutput reads a workload's log: the driver's variables, and whether
// the workload got as far as ReadyLine. Other lines are ignored.
func ParseOutput(log string) (env map[string]string, ready bool, err error) {
	env = map[string]string{}
	s := bufio.NewScanner(strings.NewReader(log))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == ReadyLine {
			ready = true
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, EnvPrefix) {
			env[k] = v
		}
	}
	return env, ready, s.Err()
}
