package engine

import "github.com/bkb-go/bkb/space"

// The search space's names, as the engine uses them.
type (
	Space  = space.Space
	Param  = space.Param
	Params = space.Params
)

// Parameter types.
const (
	TypeFloat       = space.TypeFloat
	TypeInt         = space.TypeInt
	TypeCategorical = space.TypeCategorical
)

// Box is space.Box (for the engine's tests and callers).
func Box(names []string, lower, upper []float64) (Space, error) {
	return space.Box(names, lower, upper)
}
