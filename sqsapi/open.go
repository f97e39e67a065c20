package sqsapi

import (
	"errors"

	"github.com/fifoq/fifoq"
)

// Open returns a Server that keeps its queues in st, a store from durable.Open, through the catalogue it
// opens there (fifoq.OpenCatalog): the queues' definitions (attributes, policies, tags, timestamps), their
// messages with their system attributes, the names deleted in the last 60 seconds and the move tasks, so
// that a server opened again on the same store, after a restart or a crash, has them all back. Every change
// is on disk before the action that made it returns.
//
// The catalogue re-creates the queues that st holds a definition of, each on st, which brings its messages
// back: dead-letter queues before their sources, each redrive policy bound to its dead-letter queue, or
// pending, as it was. It finishes a DeleteQueue that a crash interrupted. Queues in st that it holds no
// definition of (made with fifoq.New directly, or by a CreateQueue that did not return) are left alone;
// CreateQueue of such a name takes the queue over, messages and all. The default account and region
// (WithAccountID, WithRegion) of the first server opened on a store are the store's default namespace,
// whose queues have their own names in the store, whatever later servers' defaults.
//
// A record that does not decode returns fifoq.ErrStoreCorrupt, naming it: the store is never opened in
// part. The queues of st must not be open already (fifoq.ErrQueueOpen). Open does not close st on an error,
// and queues it opened before the error stay open on st: close st.
//
// Call Close when the server is done serving, then close st.
func Open(st *fifoq.Store, opts ...Option) (*Server, error) {
	if st == nil {
		return nil, errors.New("sqsapi: Open: nil store")
	}
	s := newServer(opts)
	cat, err := fifoq.OpenCatalog(st, s.catalogOptions()...)
	if err != nil {
		return nil, err
	}
	s.cat = cat
	return s, nil
}

// Close stops the move tasks that run and waits for them to end (fifoq.Catalog.Close). Call it once the
// server serves no more requests: a durable server's store can then be closed with no task left writing
// to it. A durable server's running tasks are not recorded as ended: they go on when the store is opened
// again. Close does not close the store, which belongs to the caller of Open. It calls BeginShutdown, so
// that a long poll still in progress ends. It returns nil.
func (s *Server) Close() error {
	s.BeginShutdown()
	return s.cat.Close()
}
