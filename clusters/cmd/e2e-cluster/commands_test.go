// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// flagsOf are the flags command c registers.
func flagsOf(c command) []string {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.flags(fs)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

var flagWord = regexp.MustCompile(`--([a-z][a-z-]*)`)

// Each command has flags of its own: -h lists them and no other, a flag
// only another command has is refused as bad input (exit 2, one line),
// and every flag the usage text shows a command with, it has.
func TestEachCommandHasItsOwnFlags(t *testing.T) {
	all := map[string]bool{}
	for _, c := range commands {
		for _, f := range flagsOf(c) {
			all[f] = true
		}
	}
	for _, c := range commands {
		own := flagsOf(c)
		for _, m := range flagWord.FindAllStringSubmatch(c.synopsis, -1) {
			if !slices.Contains(own, m[1]) {
				t.Errorf("the usage text shows %s with --%s, which it does not take", c.name, m[1])
			}
		}
		var help bytes.Buffer
		if err := run(context.Background(), []string{c.name, "-h"}, &help); err != nil {
			t.Errorf("%s -h: %v", c.name, err)
		}
		for f := range all {
			listed := regexp.MustCompile(`(?m)^  -` + f + `( |$)`).MatchString(help.String())
			if listed != slices.Contains(own, f) {
				t.Errorf("%s -h lists -%s: %t, but it takes it: %t\n%s", c.name, f, listed, !listed, help.String())
			}
			if slices.Contains(own, f) {
				continue
			}
			err := run(context.Background(), []string{c.name, "--" + f + "=x"}, &help)
			var u usageError
			if !errors.As(err, &u) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "flag provided but not defined: -"+f) {
				t.Errorf("%s --%s: got %v, want it refused as bad input on one line", c.name, f, err)
			}
		}
	}
	var usageText bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &usageText); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(usageText.String(), "\n  "+c.name+" ") {
			t.Errorf("the usage text lists no %s:\n%s", c.name, usageText.String())
		}
	}
}

// What calls e2e-cluster (the Makefile, hack/, CI's scripts, the docs and
// the runner) passes each command only flags it takes: a flag moved to
// another command would otherwise fail only on a machine with Docker.
func TestCallersPassFlagsTheCommandTakes(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var files []string
	for _, glob := range []string{"Makefile", "README.md", "docs/*.md", "hack/*.sh", ".ci/*", ".github/workflows/*.yaml", "e2e/cmd/run/*.go", "e2e/run/*.go"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	byName := map[string]command{}
	var names []string
	for _, c := range commands {
		byName[c.name] = c
		names = append(names, regexp.QuoteMeta(c.name))
	}
	// A command after e2e-cluster (a script, the docs, a string), or as a
	// quoted word just ahead of a quoted flag (the runner's Go); the call
	// runs on over lines that end in a backslash or a comma, and in prose
	// ends with its code span.
	call := regexp.MustCompile(`(?:e2e-cluster[" ,]+|")(` + strings.Join(names, "|") + `)(?:"?[ ,]+"?--|[ ,]*$)`)
	called := map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(text), "\n")
		for i := 0; i < len(lines); i++ {
			m := call.FindStringSubmatchIndex(lines[i])
			if m == nil {
				continue
			}
			name, stmt := lines[i][m[2]:m[3]], lines[i][m[3]:]
			for strings.HasSuffix(strings.TrimSpace(lines[i]), "\\") || strings.HasSuffix(strings.TrimSpace(lines[i]), ",") {
				if i++; i == len(lines) {
					break
				}
				stmt += " " + lines[i]
			}
			if j := strings.Index(stmt, "`"); j >= 0 {
				stmt = stmt[:j]
			}
			called[name] = true
			for _, f := range flagWord.FindAllStringSubmatch(stmt, -1) {
				if !slices.Contains(flagsOf(byName[name]), f[1]) {
					t.Errorf("%s calls e2e-cluster %s with --%s, which it does not take: %s", file, name, f[1], strings.TrimSpace(stmt))
				}
			}
		}
	}
	// The scan must find the calls it checks.
	for _, name := range []string{"node-image", "upgrade-bits", "up", "down", "load", "features", "profiles", "switch-release"} {
		if !called[name] {
			t.Errorf("no call of e2e-cluster %s found in %d files: the scan no longer sees them", name, len(files))
		}
	}
}
