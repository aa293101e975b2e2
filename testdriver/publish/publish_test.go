// SPDX-License-Identifier: Apache-2.0

package publish

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

type fakeController struct {
	mu      *sync.Mutex
	stopped *int
}

func (f fakeController) Stop() { f.mu.Lock(); *f.stopped++; f.mu.Unlock() }

// run drives a Keeper whose API server answers each look from answers (an
// error where the entry is negative) and returns how many times the
// controller was started and stopped once the answers are used up.
func run(t *testing.T, want int, answers []int) (starts, stops int) {
	t.Helper()
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	looks := 0
	k := &Keeper{
		Period: time.Millisecond,
		Want:   want,
		Start: func(context.Context) (Controller, error) {
			mu.Lock()
			defer mu.Unlock()
			starts++
			return fakeController{&mu, &stops}, nil
		},
		Published: func(context.Context) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			if looks == len(answers) {
				cancel()
				return max(want, 1), nil
			}
			n := answers[looks]
			looks++
			if n < 0 {
				return 0, errors.New("connection refused")
			}
			return n, nil
		},
	}
	if err := k.Run(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if looks != len(answers) {
		t.Fatalf("the keeper stopped after %d of %d looks", looks, len(answers))
	}
	return starts, stops
}

func TestKeeperStartsTheControllerAnewOnlyWhenTheSlicesStayGone(t *testing.T) {
	for name, tc := range map[string]struct {
		want    int
		answers []int
		starts  int
	}{
		"slices there throughout":                       {0, []int{2, 2, 2, 2}, 1},
		"gone for one look, then put back":              {0, []int{2, 0, 2, 0, 2}, 1},
		"gone for two looks":                            {0, []int{2, 0, 0, 2}, 2},
		"gone for four looks: anew, then anew again":    {0, []int{0, 0, 0, 0}, 3},
		"an unanswered look neither counts nor resets":  {0, []int{0, -1, 0}, 2},
		"an API server away for long is no reason":      {0, []int{-1, -1, -1, -1}, 1},
		"gone again long after the controller restarts": {0, []int{0, 0, 2, 2, 0, 0}, 3},
		"some pools all along":                          {3, []int{3, 3, 3}, 1},
		"some pools gone for one look":                  {3, []int{3, 1, 3}, 1},
		"some pools gone for two looks":                 {3, []int{1, 1, 3}, 2},
	} {
		starts, stops := run(t, tc.want, tc.answers)
		if starts != tc.starts {
			t.Errorf("%s: controller started %d times, want %d", name, starts, tc.starts)
		}
		if stops != starts {
			t.Errorf("%s: started %d times but stopped %d times: each must be stopped", name, starts, stops)
		}
	}
}
