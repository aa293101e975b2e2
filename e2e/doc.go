// SPDX-License-Identifier: Apache-2.0

// Package e2e is the conformance suite's one way in: `go test -tags e2e
// ./e2e` (make e2e runs it through ginkgo, with the flags make's variables
// become) runs the specs of package adminaccess against a cluster
// (e2e_test.go, which must import Ginkgo for the Ginkgo CLI to pass it its flags). Without the tag, `go test ./...` and `go vet ./...` see
// every package and run no cluster.
package e2e
