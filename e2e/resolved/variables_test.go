// SPDX-License-Identifier: Apache-2.0

package resolved

import (
	"reflect"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/variables"
)

// tags are the variables the run's fields are tagged with (fill's walk).
func tags(t reflect.Type, out map[string]bool) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if name, ok := sf.Tag.Lookup("variable"); ok {
			out[name] = true
			continue
		}
		switch ft := sf.Type; {
		case ft.Kind() == reflect.Struct:
			tags(ft, out)
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
			tags(ft.Elem(), out)
		}
	}
}

// Every tag of the run names a variable of the table (a misspelt one
// would be filled with "" and never said), and every variable the Job
// carries reaches the suite: through a field of the run, or as a Ginkgo
// flag only (TIMEOUT), which the run does not hold.
func TestEveryTagIsAVariableAndEveryJobVariableIsCarried(t *testing.T) {
	tagged := map[string]bool{}
	tags(reflect.TypeOf(Run{}), tagged)
	for name := range tagged {
		if _, ok := variables.Lookup(name); !ok {
			t.Errorf("a field of the run is tagged variable:%q, which the table (e2e/variables) does not have", name)
		}
	}
	for _, name := range variables.JobVariables() {
		if v, _ := variables.Lookup(name); !tagged[name] && v.Ginkgo == "" {
			t.Errorf("the Job carries %s, which no field of the run (variable:%q) takes to the suite", name, name)
		}
	}
}
