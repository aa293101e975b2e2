// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/adminaccess"
)

func TestMain(m *testing.M) { adminaccess.Main(m) }

// TestE2E runs the specs of package adminaccess. RunSpecs is called here,
// in a test file, on purpose: the Ginkgo CLI (make e2e) treats a package
// as a Ginkgo suite, and passes it its flags (parallel processes, label
// filter, reports) and the suite's own, only where one of its test files
// imports Ginkgo; otherwise it runs it as a plain go test, flags dropped
// (entry_test.go, a unit test kept out of the suite binary, keeps it so).
func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	ginkgo.RunSpecs(t, "DRA admin access conformance")
}
