// SPDX-License-Identifier: Apache-2.0

// Package specfiles reads the suite's spec sources, for the unit tests that
// keep rules no compiler checks (skips only through the release table, the
// driver's names only through package contract, no spec group using
// another's helpers, the suite linking no runner).
package specfiles

import (
	"fmt"
	"os"
	"path/filepath"
)

// Read returns the contents of every spec source (e2e/adminaccess/*.go), by
// path. The module's root is found from the working folder (a test's is its
// package's): the binaries are built with -trimpath, so runtime.Caller names
// no folder of this machine.
func Read() (map[string]string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(root, "e2e", "adminaccess", "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no spec files found under %s (%v)", root, err)
	}
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out[f] = string(data)
	}
	return out, nil
}

// moduleRoot is the nearest folder at or above the working folder that
// holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the working folder")
		}
		dir = parent
	}
}
