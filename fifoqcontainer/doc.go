// Package fifoqcontainer runs fifoq serve, the local Amazon SQS endpoint, in a container for tests, in the
// shape of the modules of testcontainers-go: [Run] starts the image and waits until its /health answers
// 200, options declare queues (from a config file or by name), the region and the access keys, and
// [Container.EndpointURL] returns the URL to give an AWS SDK as its endpoint.
//
//	ctr, err := fifoqcontainer.Run(ctx, "fifoq:dev", fifoqcontainer.WithQueues("orders.fifo,ContentBasedDeduplication=true"))
//	testcontainers.CleanupContainer(t, ctr)
//	endpoint, err := ctr.EndpointURL(ctx) // http://localhost:32768
//
// By default the container's port 9324 is published on a random port of the Docker host, as for any
// testcontainers module. [WithHostNetwork] runs it in the host's network instead, listening on a loopback
// port, which Run waits on and EndpointURL returns: for machines and CI runners where Docker has no bridge
// network, as this repository's own CI. Offline, that needs no variable of testcontainers', except that its
// reaper (Ryuk) cannot be pulled: Run then fails within seconds with [ErrReaperUnavailable], which names
// TESTCONTAINERS_RYUK_DISABLED=true.
//
// The image is built from this repository by "bash .ci/image" (fifoq:dev); its settings are environment
// variables (FIFOQ_ADDR, FIFOQ_QUEUE, FIFOQ_CONFIG, ...), which the options set. docs/containers.md has the
// same settings for Java, Python and Node users of Testcontainers.
package fifoqcontainer
