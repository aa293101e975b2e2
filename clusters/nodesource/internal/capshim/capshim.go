// SPDX-License-Identifier: Apache-2.0

// Package capshim lets privileged containers start on hosts whose capability
// bounding set is incomplete.
//
// runc refuses to start a process that asks for a capability the calling process
// cannot hold ("unable to apply caps: operation not permitted"). kind runs its
// nodes with --privileged, which asks for every capability the kernel knows, so on
// a VM that drops one (CAP_SYS_RESOURCE here) no kind node can start. The shim sits
// in front of the real runc, removes from the OCI spec exactly the capabilities
// missing from its own bounding set, and hands over. Where the bounding set is
// complete it rewrites nothing.
package capshim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// capNames lists the Linux capabilities by number (linux/capability.h).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

// Missing returns the names of the known capabilities absent from a bounding-set
// mask such as the hex CapBnd field of /proc/self/status.
func Missing(mask uint64) map[string]bool {
	missing := map[string]bool{}
	for i, name := range capNames {
		if mask&(1<<uint(i)) == 0 {
			missing[name] = true
		}
	}
	return missing
}

// BoundingSet reads this process's capability bounding set.
func BoundingSet() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapBnd:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapBnd line in /proc/self/status")
}

// capSetNames are the five sets an OCI process may carry.
var capSetNames = []string{"bounding", "effective", "inheritable", "permitted", "ambient"}

// StripProcess removes the missing capabilities from an OCI process object (the
// file given to `runc exec --process`). It reports whether anything changed.
func StripProcess(process map[string]any, missing map[string]bool) bool {
	caps, ok := process["capabilities"].(map[string]any)
	if !ok {
		return false
	}
	changed := false
	for _, set := range capSetNames {
		list, ok := caps[set].([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, c := range list {
			if name, ok := c.(string); ok && missing[name] {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	return changed
}

// StripSpec removes the missing capabilities from a bundle's config.json.
func StripSpec(spec map[string]any, missing map[string]bool) bool {
	process, ok := spec["process"].(map[string]any)
	if !ok {
		return false
	}
	return StripProcess(process, missing)
}

// Target says which file of a runc invocation holds the capabilities to strip.
type Target struct {
	// Path is the JSON file to rewrite; empty when the command starts no process.
	Path string
	// WholeSpec is true for a bundle's config.json, false for an exec process file.
	WholeSpec bool
}

// FindTarget reads runc's command line (without argv[0]) and returns the file
// that describes the process about to start: <bundle>/config.json for create and
// run, the --process file for exec. cwd is the bundle when none is named, as in runc.
func FindTarget(args []string, cwd string) Target {
	command := ""
	bundle, process := "", ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(arg, "=")
		next := func() string {
			if hasValue {
				return value
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch name {
		case "--bundle", "-b":
			bundle = next()
		case "--process", "-p":
			process = next()
		case "--root", "--log", "--log-format", "--criu", "--rootless", "--pid-file", "--console-socket":
			next()
		default:
			if command == "" && !strings.HasPrefix(arg, "-") {
				command = arg
			}
		}
	}
	switch command {
	case "create", "run":
		if bundle == "" {
			bundle = cwd
		}
		return Target{Path: filepath.Join(bundle, "config.json"), WholeSpec: true}
	case "exec":
		if process != "" {
			return Target{Path: process}
		}
	}
	return Target{}
}

// Rewrite strips the missing capabilities from the target file in place.
func Rewrite(t Target, missing map[string]bool) error {
	if t.Path == "" || len(missing) == 0 {
		return nil
	}
	raw, err := os.ReadFile(t.Path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("parsing %s: %w", t.Path, err)
	}
	var changed bool
	if t.WholeSpec {
		changed = StripSpec(doc, missing)
	} else {
		changed = StripProcess(doc, missing)
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	info, err := os.Stat(t.Path)
	if err != nil {
		return err
	}
	return os.WriteFile(t.Path, out, info.Mode().Perm())
}
