// Package space is the typed search space of a study: float (linear, log
// or stepped), integer and categorical parameters, conditions under which
// a parameter exists (a parent's values), space files, a point's typed
// parameters, and the encoding of a point into the GP's unit coordinates
// (one-hot categoricals, inactive parameters at their placeholders). Package
// study keeps these names (study.Space, study.Float, ...) as aliases.
package space
