package storage

import (
	"context"
	"time"
)

// RetryNotice is told that a storage could not reach its server and
// retries: what it was doing, the error, and how long it will keep
// retrying before it returns the error. A storage calls it once per
// operation, at the first retry of a connection error (not of the
// serialization failures that concurrent workers meet in normal
// operation), so that a command does not wait for half a minute in
// silence when a server is down or its address is wrong.
type RetryNotice func(what string, err error, retrying time.Duration)

type retryNoticeKey struct{}

// WithRetryNotice returns a context whose storage operations tell f when
// they retry a connection (as net/http/httptrace carries its hooks): the
// storage packages never print.
func WithRetryNotice(ctx context.Context, f RetryNotice) context.Context {
	return context.WithValue(ctx, retryNoticeKey{}, f)
}

// RetryNoticeFrom returns the RetryNotice of ctx, or nil.
func RetryNoticeFrom(ctx context.Context) RetryNotice {
	f, _ := ctx.Value(retryNoticeKey{}).(RetryNotice)
	return f
}
