// SPDX-License-Identifier: Apache-2.0

//go:build !e2e

package e2e

import (
	"os"
	"regexp"
	"testing"
)

// The Ginkgo CLI runs a package as a Ginkgo suite only where a test file
// imports Ginkgo (its test_suite.go reads the files for the import path);
// a suite entry without it ran as a plain go test, with every Ginkgo flag
// and every flag of the suite dropped: one process, no label filter, no
// reports, the release and artifacts folder left at their defaults.
func TestEntryImportsGinkgo(t *testing.T) {
	src, err := os.ReadFile("e2e_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`"github.com/onsi/ginkgo/v2"`).Match(src) || !regexp.MustCompile(`ginkgo\.RunSpecs\(`).Match(src) {
		t.Fatal("e2e_test.go must import github.com/onsi/ginkgo/v2 and call ginkgo.RunSpecs, or the Ginkgo CLI runs the suite as a plain go test without its flags")
	}
}
