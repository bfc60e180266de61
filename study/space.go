package study

import (
	"io"

	"github.com/bkb-go/bkb/space"
)

// The search space is package space's; study keeps its names, so that a
// study's configuration, trials and space files read as before.
type (
	// Space is space.Space: the typed search space of a study.
	Space = space.Space
	// Param is space.Param: one parameter of a space.
	Param = space.Param
	// Params is space.Params: a point's parameters by name.
	Params = space.Params
	// Type is space.Type: the type of a parameter.
	Type = space.Type
	// Condition is space.Condition: the parent values under which a
	// parameter exists.
	Condition = space.Condition
)

// Parameter types and limits (package space).
const (
	TypeFloat       = space.TypeFloat
	TypeInt         = space.TypeInt
	TypeCategorical = space.TypeCategorical
	MaxAbsBound     = space.MaxAbsBound
	MaxSpaceFile    = space.MaxSpaceFile
	MaxSpaceDepth   = space.MaxSpaceDepth
)

// ErrInactive is space.ErrInactive.
var ErrInactive = space.ErrInactive

// Float is space.Float: a real parameter in [low, high].
func Float(name string, low, high float64) Param { return space.Float(name, low, high) }

// LogFloat is space.LogFloat: a real parameter on a log scale.
func LogFloat(name string, low, high float64) Param { return space.LogFloat(name, low, high) }

// Discrete is space.Discrete: a real parameter taking low + k step.
func Discrete(name string, low, high, step float64) Param {
	return space.Discrete(name, low, high, step)
}

// Int is space.Int: an integer parameter in [low, high].
func Int(name string, low, high int) Param { return space.Int(name, low, high) }

// LogInt is space.LogInt: an integer parameter on a log scale.
func LogInt(name string, low, high int) Param { return space.LogInt(name, low, high) }

// Categorical is space.Categorical: a parameter taking one of choices.
func Categorical(name string, choices ...any) Param { return space.Categorical(name, choices...) }

// NewSpace is space.NewSpace.
func NewSpace(params ...Param) (Space, error) { return space.NewSpace(params...) }

// Box is space.Box: a space of floats on a box.
func Box(names []string, lower, upper []float64) (Space, error) {
	return space.Box(names, lower, upper)
}

// ReadSpace is space.ReadSpace: a space file.
func ReadSpace(r io.Reader) (Space, error) { return space.ReadSpace(r) }
