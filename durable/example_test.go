package durable_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/durable"
)

// A queue kept in a store survives a restart: the messages sent before Close are received after the
// directory is opened again, in order.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fifoq-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := durable.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	q, err := fifoq.New("orders.fifo", fifoq.WithStore(st), fifoq.WithContentBasedDeduplication())
	if err != nil {
		log.Fatal(err)
	}
	for _, body := range []string{"order 1", "order 2", "order 3"} {
		if _, err := q.Send(ctx, fifoq.Message{Body: body, GroupID: "customer-7"}); err != nil {
			log.Fatal(err) // the send is durable once it returns nil
		}
	}
	if err := st.Close(); err != nil {
		log.Fatal(err)
	}

	// The process restarts: open the directory again, and the queue of the same name.
	st, err = durable.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	q, err = fifoq.New("orders.fifo", fifoq.WithStore(st), fifoq.WithContentBasedDeduplication())
	if err != nil {
		log.Fatal(err)
	}
	ds, err := q.Receive(ctx, fifoq.ReceiveOptions{MaxMessages: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range ds {
		fmt.Println(d.Body)
	}
	// Output:
	// order 1
	// order 2
	// order 3
}

// WriteFile writes a file beside a store (a key, a setting) so that a crash or a loss of power leaves the
// old content or the new, never an empty or torn file; MkdirAll makes its directory durably first.
func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "fifoq-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	keys := filepath.Join(dir, "data", "keys")
	if err := durable.MkdirAll(keys, 0o700); err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(keys, "key.pem")
	for _, content := range []string{"first key", "second key"} {
		if err := durable.WriteFile(path, []byte(content), 0o600); err != nil {
			log.Fatal(err) // path is as it was
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b), info.Mode().Perm())
	// Output:
	// second key -rw-------
}
