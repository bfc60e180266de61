// Package engine is the model and candidate engine of a study: the
// configuration and its versions (a table of named rules), the GP
// posteriors on the candidates (BKB's DTC on a Nyström dictionary, or
// exact), the growing candidates (trust regions, pool, polish, local
// steps, branch asks of conditional spaces), the value transform (warp and
// standardization), pending points, hyperparameter fits, the model of
// several objectives and constraints, and the snapshot codec.
//
// An Engine is driven by typed events (Event: an ask, a tell, a failure,
// ...), never by storage records: package study keeps the records and the
// storage, converts each record to an event and asks the engine for the
// next point (Suggest). The same events in the same order give the same
// suggestions, which is what lets every process that loads a study replay
// it. Package study keeps the configuration's names (study.Config, ...)
// as aliases.
package engine
