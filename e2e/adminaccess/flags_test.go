package adminaccess

import (
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/run"
)

// Every suite flag the variables' table names lands in the suite's
// configuration (registerFlags panics otherwise, at the start of a run).
func TestEveryVariablesSuiteFlagIsRead(t *testing.T) {
	fields := suiteFields()
	for _, v := range run.Variables {
		if v.Suite != "" && !v.Switch && fields[v.Suite] == nil {
			t.Errorf("%s: the suite does not read --%s (suiteFields)", v.Name, v.Suite)
		}
		if v.Switch && v.Suite != "" && v.Suite != "keep-cluster" {
			t.Errorf("%s: --%s is a switch the suite does not read", v.Name, v.Suite)
		}
	}
}
