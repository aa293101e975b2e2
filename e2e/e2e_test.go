//go:build e2e

package e2e

import (
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/adminaccess"
)

func TestMain(m *testing.M) { adminaccess.Main(m) }

func TestE2E(t *testing.T) { adminaccess.Run(t) }
