package storage

// Wrapper is a Storage that adds to or changes the behaviour of another
// (a server's leases, a test's fault injection) and names it: the
// optional interfaces of the wrapped storage ([Snapshots],
// [SnapshotStreams], [Catalog], [Attributes]) stay reachable through
// [As], whichever of them the
// wrapper itself implements. A wrapper that embeds the storage it wraps
// and implements Unwrap passes every optional interface through by
// construction, including ones added later.
type Wrapper interface {
	Storage
	// Unwrap returns the storage this one wraps.
	Unwrap() Storage
}

// As returns the first storage in the chain st, st.Unwrap(),
// st.Unwrap().Unwrap(), ... that implements T (an optional interface such
// as [Snapshots]), in the manner of errors.As. Code that looks for an
// optional interface of a storage calls As instead of a type assertion,
// so that a wrapper never hides what it wraps.
func As[T any](st Storage) (T, bool) {
	for st != nil {
		if t, ok := st.(T); ok {
			return t, true
		}
		w, ok := st.(Wrapper)
		if !ok {
			break
		}
		st = w.Unwrap()
	}
	var zero T
	return zero, false
}
