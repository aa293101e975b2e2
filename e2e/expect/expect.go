// Package expect holds the Gomega matchers of the suite's exact, version-aware
// outcomes.
package expect

import (
	"errors"
	"fmt"

	"github.com/onsi/gomega/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MatchForbiddenAt matches the apiserver's denial of a field: a 422 Invalid
// whose causes include a FieldValueForbidden at exactly that path with
// exactly that message.
func MatchForbiddenAt(path, message string) types.GomegaMatcher {
	return &forbiddenAt{path: path, message: "Forbidden: " + message}
}

type forbiddenAt struct{ path, message string }

func (m *forbiddenAt) Match(actual any) (bool, error) {
	if actual == nil {
		return false, nil
	}
	err, ok := actual.(error)
	if !ok {
		return false, fmt.Errorf("MatchForbiddenAt expects an error, got %T", actual)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false, nil
	}
	s := status.Status()
	if s.Code != 422 || s.Reason != metav1.StatusReasonInvalid || s.Details == nil {
		return false, nil
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseType(field.ErrorTypeForbidden) && c.Field == m.path && c.Message == m.message {
			return true, nil
		}
	}
	return false, nil
}

func (m *forbiddenAt) FailureMessage(actual any) string {
	return fmt.Sprintf("expected the apiserver to deny with 422 Invalid, cause FieldValueForbidden at %q: %q\nseen: %s", m.path, m.message, describe(actual))
}

func (m *forbiddenAt) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("expected no denial at %q, seen: %s", m.path, describe(actual))
}

// CauseFields lists the field of every cause of an API error, so a spec can
// assert that a denial names exactly one field. Nil for any other error.
func CauseFields(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field)
	}
	return out
}

func describe(actual any) string {
	err, ok := actual.(error)
	if !ok || err == nil {
		return "no error (the request was allowed)"
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		out := fmt.Sprintf("%d %s: %s", s.Code, s.Reason, s.Message)
		if s.Details != nil {
			for _, c := range s.Details.Causes {
				out += fmt.Sprintf("\n  cause %s at %q: %q", c.Type, c.Field, c.Message)
			}
		}
		return out
	}
	return err.Error()
}
