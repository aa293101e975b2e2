package driver

import (
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcev1 "k8s.io/kubernetes/pkg/apis/resource/v1"
	"k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Every layout's slices must pass kube-apiserver's own validation (the
// module's, at the pinned release): a slice it refused would leave a feature
// group with no devices and a confusing wait instead of an error.
func TestEveryLayoutPassesTheAPIServersValidation(t *testing.T) {
	for _, layout := range contract.Layouts {
		d := newDriver(t)
		d.Layout = layout
		slices := d.Resources().Pools["node-1"].Slices
		for i, sl := range slices {
			v1 := &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: "node-1-" + string(layout)},
				Spec: resourceapi.ResourceSliceSpec{
					Driver:         name,
					Pool:           resourceapi.ResourcePool{Name: "node-1", ResourceSliceCount: int64(len(slices))},
					Devices:        sl.Devices,
					SharedCounters: sl.SharedCounters,
				},
			}
			if len(sl.Devices) > 0 {
				v1.Spec.NodeName = ptr.To("node-1")
			} else {
				v1.Spec.AllNodes = ptr.To(true)
			}
			var internal resource.ResourceSlice
			if err := resourcev1.Convert_v1_ResourceSlice_To_resource_ResourceSlice(v1, &internal, nil); err != nil {
				t.Fatalf("%s slice %d: converting: %v", layout, i, err)
			}
			if errs := validation.ValidateResourceSlice(&internal); len(errs) > 0 {
				t.Errorf("%s slice %d: kube-apiserver would refuse it: %v", layout, i, errs.ToAggregate())
			}
		}
	}
}
