// SPDX-License-Identifier: Apache-2.0

package variables

import (
	"strings"
	"unicode"
)

// GinkgoFlags are Ginkgo's flags of the variables that have one
// (Variable.Ginkgo) and that keep selects (nil: all), each where its value
// is not empty (an empty filter is no filter): prefix "--" spells them for
// the Ginkgo CLI, "-ginkgo." for a compiled suite.
func GinkgoFlags(get func(string) string, prefix string, keep func(Variable) bool) []string {
	var out []string
	for _, v := range Variables {
		if v.Ginkgo == "" || (keep != nil && !keep(v)) || get(v.Name) == "" {
			continue
		}
		out = append(out, prefix+v.Ginkgo+"="+get(v.Name))
	}
	return out
}

// SplitClasses is the one reading of DEVICE_CLASS: the classes it names,
// separated by commas (spaces around them and empty ones dropped); the
// runner, preflight and the in-cluster entry all split it here.
func SplitClasses(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}
