package variables

import (
	"strings"
	"unicode"
)

// SuiteFlags are the suite binary's flags of the variables that have one
// (Variable.Suite) and that keep selects (nil: all), with the values get
// gives: --release=1.35 and so on; a switch's flag only where it is 1
// (--keep-cluster).
func SuiteFlags(get func(string) string, keep func(Variable) bool) []string {
	var out []string
	for _, v := range Variables {
		if v.Suite == "" || (keep != nil && !keep(v)) {
			continue
		}
		switch {
		case !v.Switch:
			out = append(out, "--"+v.Suite+"="+get(v.Name))
		case get(v.Name) == "1":
			out = append(out, "--"+v.Suite)
		}
	}
	return out
}

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
