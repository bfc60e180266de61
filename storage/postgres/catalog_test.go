package postgres_test

import (
	"testing"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
	"github.com/bkb-go/bkb/storage/storagetest"
)

func TestCatalog(t *testing.T) {
	serverURL(t)
	storagetest.RunCatalog(t, func(t *testing.T) storage.Storage { return openStore(t, newSchema(t), postgres.Options{}) })
}
