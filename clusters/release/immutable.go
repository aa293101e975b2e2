package release

import "fmt"

// SpecPrint is how kube-apiserver prints the new spec in the refusal of an
// update that changes a claim's or template's spec ("spec: Invalid value:
// <value>: field is immutable"; ValidateImmutableField at "spec" on every
// release here). Read in the modules and produced with each release's own
// registry code (rest.BeforeUpdate):
type SpecPrint string

const (
	// SpecPrintGo: v1.33.13's field errors print the internal type with %#v;
	// requests are pointers there, so adminAccess never shows.
	SpecPrintGo SpecPrint = "Go"
	// SpecPrintJSON: from v1.34.4 they marshal it, Go field names and all
	// ({"Devices":{"Requests":[{... "AdminAccess":true ...}]}}).
	SpecPrintJSON SpecPrint = "JSON"
	// SpecPrintNull: v1.37.2 validates a claim's spec declaratively
	// (DeclarativeValidationBeta, on by default) and its immutability
	// error carries no value: "Invalid value: null". Templates keep the
	// hand-written check.
	SpecPrintNull SpecPrint = "null"
)

// immutableSpecPrint is the release's SpecPrint for kind (ResourceClaim or
// ResourceClaimTemplate).
func (r Release) immutableSpecPrint(kind string) SpecPrint {
	switch {
	case r.Minor == "1.33":
		return SpecPrintGo
	case r.Minor == "1.37" && kind == "ResourceClaim":
		return SpecPrintNull
	default:
		return SpecPrintJSON
	}
}

// ImmutableSpecValue is what the refusal's value must contain for a spec
// whose first request's adminAccess is now v ("true", "false" or "null"):
// with the value printed as JSON, that field; in Go, the internal type's
// name; as null, exactly null.
func (r Release) ImmutableSpecValue(kind, v string) (text string, exact bool) {
	switch r.immutableSpecPrint(kind) {
	case SpecPrintGo:
		spec := "ResourceClaimSpec"
		if kind == "ResourceClaimTemplate" {
			spec = "ResourceClaimTemplateSpec"
		}
		return "resource." + spec + "{", false
	case SpecPrintNull:
		return "null", true
	default:
		return fmt.Sprintf(`"AdminAccess":%s`, v), false
	}
}
