// SPDX-License-Identifier: Apache-2.0

// Command runc-capshim is registered as the OCI runtime of dockerd (on the host)
// and of containerd (inside kind nodes). It drops the capabilities this host cannot
// grant from the process about to start, then execs the real runc with the same
// arguments. See package capshim for why.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/internal/capshim"
)

func main() {
	runc, err := realRunc()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runc-capshim:", err)
		os.Exit(1)
	}
	if mask, err := capshim.BoundingSet(); err == nil {
		cwd, _ := os.Getwd()
		target := capshim.FindTarget(os.Args[1:], cwd)
		if err := capshim.Rewrite(target, capshim.Missing(mask)); err != nil {
			fmt.Fprintln(os.Stderr, "runc-capshim:", err)
			os.Exit(1)
		}
	}
	argv := append([]string{runc}, os.Args[1:]...)
	if err := syscall.Exec(runc, argv, os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, "runc-capshim: exec", runc+":", err)
		os.Exit(1)
	}
}

// realRunc finds the runc binary this shim stands in front of: $RUNC_CAPSHIM_RUNC,
// or the first runc on the usual paths that is not this program.
func realRunc() (string, error) {
	if p := os.Getenv("RUNC_CAPSHIM_RUNC"); p != "" {
		return p, nil
	}
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for _, p := range []string{"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"} {
		if resolved, err := filepath.EvalSymlinks(p); err == nil && resolved != self {
			return p, nil
		}
	}
	if p, err := exec.LookPath("runc"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no runc found (set RUNC_CAPSHIM_RUNC)")
}
