// Command pubsub shows publish / subscribe over fifoq queues (seed 003): a news site has posts in
// categories, users subscribe to categories, and every subscriber of a category gets one email per new
// post in it.
//
// Creating a post only publishes it to a FIFO topic, posts.fifo, as SNS in front of SQS: grouped by
// category, deduplicated by post id, with the category as a message attribute. The scheduler's queue is
// subscribed with raw delivery; a music feed's queue is subscribed with a filter policy on the category, so
// it gets the music posts only, and in order. The rest is a two-level fan-out:
//
//	posts.fifo -> scheduler  : reads the category's subscribers from the cache and splits them into jobs
//	                           of at most 300 users, sent to the jobs queue
//	jobs       -> dispatcher : turns a job into one message per (user, post), sent to the emails queue
//	emails     -> sender     : sends the email, through idempotency.Wrap keyed by (user, post)
//
// Every stage fails now and then, as Lambda functions do: the scheduler and the dispatcher crash after
// sending part or all of their messages, so those are sent again; the mail server refuses some emails; the
// sender crashes after sending an email but before the message is deleted. Delivery is at least once, so
// the emails queue sees duplicates with new message ids. The idempotency store, keyed by (user, post)
// rather than by message id, lets exactly one email through per subscriber and post.
//
//	go run ./examples/pubsub
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/idempotency"
	"github.com/fifoq/fifoq/topic"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pubsub:", err)
		os.Exit(1)
	}
}

const (
	seed      = 3    // drives the subscriptions and every injected failure, so each run prints the same
	users     = 1000 // user ids 1..users
	chunkSize = 300  // the most subscribers in one job
)

// Each user subscribes to a category with this chance, in percent.
var categories = map[string]int{"entertainment": 35, "movies": 25, "music": 70, "sports": 40}

// The posts the site publishes.
var posts = []post{
	{ID: "p1", Category: "music"},
	{ID: "p2", Category: "sports"},
	{ID: "p3", Category: "music"},
	{ID: "p4", Category: "movies"},
	{ID: "p5", Category: "entertainment"},
	{ID: "p6", Category: "music"},
}

// post is the body of a posts.fifo message.
type post struct {
	ID       string `json:"id"`
	Category string `json:"category"`
}

// job is the body of a jobs message: some of the subscribers to email about a post.
type job struct {
	Post  post  `json:"post"`
	Chunk int   `json:"chunk"`
	Users []int `json:"users"`
}

// run publishes the posts, runs the three consumers until every queue is empty, and checks the outbox.
func run(w io.Writer) error {
	// Failed messages come back at once (RetryImmediately below) instead of after their visibility
	// timeout, so no time has to pass: the queues run on a manual clock that is never advanced, and wait
	// only for messages.
	clk := fifoq.NewManualClock(time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC))
	a, err := newApp(clk)
	if err != nil {
		return err
	}
	// No time limit: the run ends when the queues are empty, however slow the machine. (Its test runs it
	// inside a synctest bubble, which reports a run stuck for good.)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	fmt.Fprintf(w, "subscribers: %d users;", users)
	for _, c := range slices.Sorted(maps.Keys(categories)) {
		fmt.Fprintf(w, " %s %d", c, len(a.subscribers[c]))
	}
	fmt.Fprintln(w)
	for _, p := range posts {
		if err := a.createPost(ctx, p); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "API: created %d posts, each published to the topic posts.fifo\n", len(posts))
	if err := a.checkFeed(w); err != nil {
		return err
	}

	if err := a.runConsumers(ctx, cancel); err != nil {
		return err
	}

	jobs := 0
	for _, p := range posts {
		jobs += (len(a.subscribers[p.Category]) + chunkSize - 1) / chunkSize
	}
	fmt.Fprintf(w, "scheduler: %d posts -> %d jobs of at most %d users; it crashed %d time(s) after sending, so %d job messages were sent\n",
		len(posts), jobs, chunkSize, a.schedulerCrash.failures(), a.jobsSent.Load())
	fmt.Fprintf(w, "dispatcher: %d job messages -> %d email messages; it crashed %d time(s) half-way through a job\n",
		a.jobsSent.Load(), a.emailsSent.Load(), a.dispatcherCrash.failures())
	fmt.Fprintf(w, "sender: %d deliveries; %d refused by the mail server and retried, %d crashes before the delete\n",
		a.deliveries.Load(), a.mailServer.failures(), a.senderCrash.failures())
	fmt.Fprintf(w, "sender: %d repeats (duplicate messages, redeliveries after a crash) skipped by the idempotency store\n",
		a.deliveries.Load()-a.attempts.Load())
	return a.check(w)
}

// app holds the site's state and queues, and the three consumers' handlers.
type app struct {
	subscribers map[string]map[int]bool // category -> set of user ids: the cache of the seed (a Redis set)
	outbox      *outbox

	clk                 *fifoq.ManualClock
	topic               *topic.Topic // posts.fifo, which the API publishes to
	posts, jobs, emails *fifoq.Queue
	musicFeed           *fifoq.Queue // the music posts, through a filter policy

	// Injected failures.
	schedulerCrash, dispatcherCrash, mailServer, senderCrash *chaos

	jobsSent, emailsSent, deliveries, attempts atomic.Int64
}

func newApp(clk *fifoq.ManualClock) (*app, error) {
	a := &app{
		subscribers:     subscribe(rand.New(rand.NewPCG(seed, 0))),
		outbox:          &outbox{got: make(map[email]int)},
		clk:             clk,
		schedulerCrash:  newChaos(seed, "scheduler", 40),
		dispatcherCrash: newChaos(seed, "dispatcher", 30),
		mailServer:      newChaos(seed, "mail server", 5),
		senderCrash:     newChaos(seed, "sender", 3),
	}
	var err error
	// The topic posts.fifo keeps the posts of a category in order and drops a post published twice
	// (deduplication id); the queue posts.fifo gets them all, music-feed.fifo the music posts.
	if a.topic, err = topic.New("posts.fifo", topic.WithClock(clk)); err != nil {
		return nil, err
	}
	if a.posts, err = fifoq.New("posts.fifo", fifoq.WithClock(clk)); err != nil {
		return nil, err
	}
	if _, err = a.topic.Subscribe(a.posts, topic.SubscriptionAttributes{RawMessageDelivery: true}); err != nil {
		return nil, err
	}
	if a.musicFeed, err = fifoq.New("music-feed.fifo", fifoq.WithClock(clk)); err != nil {
		return nil, err
	}
	if _, err = a.topic.Subscribe(a.musicFeed, topic.SubscriptionAttributes{FilterPolicy: musicPolicy}); err != nil {
		return nil, err
	}
	// The other two are standard queues: order does not matter there, throughput does.
	if a.jobs, err = fifoq.New("jobs", fifoq.WithClock(clk)); err != nil {
		return nil, err
	}
	if a.emails, err = fifoq.New("emails", fifoq.WithClock(clk)); err != nil {
		return nil, err
	}
	return a, nil
}

// subscribe makes the subscriptions: each user to each category with the category's chance.
func subscribe(rng *rand.Rand) map[string]map[int]bool {
	subs := make(map[string]map[int]bool)
	for _, c := range slices.Sorted(maps.Keys(categories)) {
		subs[c] = make(map[int]bool)
		for u := 1; u <= users; u++ {
			if rng.IntN(100) < categories[c] {
				subs[c][u] = true
			}
		}
	}
	return subs
}

// musicPolicy is the music feed's filter policy, on the category attribute of the posts.
const musicPolicy = `{"category": ["music"]}`

// createPost is the API: it stores the post (not shown) and publishes it to the push system, nothing more.
func (a *app) createPost(ctx context.Context, p post) error {
	_, err := a.topic.Publish(ctx, topic.Message{
		Message:         encode(p),
		GroupID:         p.Category,
		DeduplicationID: p.ID,
		Attributes:      map[string]fifoq.Attribute{"category": {DataType: "String", StringValue: p.Category}},
	})
	return err
}

// checkFeed checks the music feed: the music posts in publish order, each in SNS's envelope, and no other.
func (a *app) checkFeed(w io.Writer) error {
	var got, want []string
	for _, p := range posts {
		if p.Category == "music" {
			want = append(want, p.ID)
		}
	}
	for s := range a.musicFeed.Messages() {
		e, err := topic.ParseEnvelope(s.Body)
		if err != nil {
			return err
		}
		var p post
		if err := json.Unmarshal([]byte(e.Message), &p); err != nil {
			return err
		}
		got = append(got, p.ID)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("music feed: posts %v, want %v", got, want)
	}
	m := a.topic.Metrics()
	fmt.Fprintf(w, "topic: music-feed.fifo got posts %v through the filter policy %s; %d notifications delivered, %d filtered out\n",
		got, musicPolicy, m.Delivered, m.FilteredOut)
	return nil
}

// runConsumers runs the scheduler, the dispatcher and the sender until every queue is empty.
func (a *app) runConsumers(ctx context.Context, cancel context.CancelFunc) error {
	// Stop when the three queues are empty, read in pipeline order: once posts.fifo is empty no job can
	// be sent any more, and once jobs is empty no email. OnBatch runs after each batch is settled, so the
	// batch that deletes the last message sees everything empty.
	drained := func(fifoq.BatchReport) {
		for _, q := range []*fifoq.Queue{a.posts, a.jobs, a.emails} {
			if s := q.Stats(); s.Visible+s.InFlight+s.Delayed > 0 {
				return
			}
		}
		cancel()
	}
	opts := func(concurrency int) fifoq.ConsumerOptions {
		return fifoq.ConsumerOptions{
			Batch:                   fifoq.BatchOptions{Size: 1}, // one message per invocation, as in the seed
			MaxConcurrency:          concurrency,
			ReportBatchItemFailures: true,
			RetryImmediately:        true,
			OnBatch:                 drained,
		}
	}
	store := idempotency.NewMemoryStore(idempotency.WithClock(a.clk))
	consumers := []struct {
		q           *fifoq.Queue
		h           fifoq.Handler
		concurrency int
	}{
		{a.posts, a.schedule, 4}, // FIFO: at most one batch per category at a time
		{a.jobs, a.dispatch, 8},
		{a.emails, a.sender(store), 16},
	}
	var wg sync.WaitGroup
	errs := make([]error, len(consumers))
	for i, c := range consumers {
		consumer, err := fifoq.NewConsumer(c.q, c.h, opts(c.concurrency))
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		wg.Go(func() { errs[i] = consumer.Run(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

var errCrash = errors.New("crashed before the delete")

// schedule is the job scheduler: it reads the subscribers of a post's category and sends them to the
// jobs queue in chunks of at most chunkSize, so that no single function has to handle them all.
func (a *app) schedule(ctx context.Context, batch []fifoq.Delivery) error {
	for _, d := range batch {
		var p post
		if err := json.Unmarshal([]byte(d.Body), &p); err != nil {
			return err
		}
		users := slices.Sorted(maps.Keys(a.subscribers[p.Category])) // SMEMBERS, in a fixed order
		for i := 0; i*chunkSize < len(users); i++ {
			chunk := users[i*chunkSize : min((i+1)*chunkSize, len(users))]
			if _, err := a.jobs.Send(ctx, fifoq.Message{Body: encode(job{Post: p, Chunk: i, Users: chunk})}); err != nil {
				return err
			}
			a.jobsSent.Add(1)
		}
		if a.schedulerCrash.fail(p.ID) {
			return errCrash // the jobs are sent; the post comes back and they are sent again
		}
	}
	return nil
}

// dispatch turns a job into one emails message per (user, post), sent ten at a time.
func (a *app) dispatch(ctx context.Context, batch []fifoq.Delivery) error {
	for _, d := range batch {
		var j job
		if err := json.Unmarshal([]byte(d.Body), &j); err != nil {
			return err
		}
		crash := a.dispatcherCrash.fail(j.Post.ID + "/" + strconv.Itoa(j.Chunk))
		for i := 0; i < len(j.Users); i += 10 {
			if crash && i >= len(j.Users)/2 {
				return errCrash // half the emails are sent; the job comes back and they are sent again
			}
			var ms []fifoq.Message
			for _, u := range j.Users[i:min(i+10, len(j.Users))] {
				ms = append(ms, emailMessage(u, j.Post))
			}
			if _, err := a.emails.SendBatch(ctx, ms); err != nil {
				return err
			}
			a.emailsSent.Add(int64(len(ms)))
		}
	}
	return nil
}

// emailMessage is the emails message for user u about post p: who and what in attributes, the subject in
// the body.
func emailMessage(u int, p post) fifoq.Message {
	return fifoq.Message{
		Body: fmt.Sprintf("New in %s: post %s", p.Category, p.ID),
		Attributes: map[string]fifoq.Attribute{
			"user": {DataType: "Number", StringValue: strconv.Itoa(u)},
			"post": {DataType: "String", StringValue: p.ID},
		},
	}
}

// emailKey is the idempotency key of an emails message: the (user, post) it is for. Two messages for the
// same user and post have different message ids, so the message id would not do.
func emailKey(d fifoq.Delivery) string {
	return "email/" + d.Attributes["user"].StringValue + "/" + d.Attributes["post"].StringValue
}

// sender returns the sender's handler: sendEmails made idempotent by (user, post) through the store. It
// also injects crashes after the emails went out and were marked sent, before the messages are deleted:
// the redelivered messages are skipped by the store.
func (a *app) sender(store idempotency.Store) fifoq.Handler {
	h := idempotency.Wrap(a.sendEmails, store, time.Minute, emailKey)
	return func(ctx context.Context, batch []fifoq.Delivery) error {
		a.deliveries.Add(int64(len(batch)))
		if err := h(ctx, batch); err != nil {
			return err
		}
		for _, d := range batch {
			if a.senderCrash.fail(emailKey(d)) {
				return errCrash
			}
		}
		return nil
	}
}

// sendEmails sends one email per message. A message the mail server refuses is reported as a batch item
// failure: the store releases its key and the queue delivers it again, while the emails that went out are
// marked sent.
func (a *app) sendEmails(ctx context.Context, batch []fifoq.Delivery) error {
	var failed []string
	for _, d := range batch {
		a.attempts.Add(1)
		if a.mailServer.fail(emailKey(d)) {
			failed = append(failed, d.MessageID)
			continue
		}
		a.outbox.send(d.Attributes["user"].StringValue, d.Attributes["post"].StringValue)
	}
	if failed != nil {
		return &fifoq.BatchItemFailures{MessageIDs: failed}
	}
	return nil
}

// outbox stands for the mail server: it counts the emails per (user, post).
type outbox struct {
	mu  sync.Mutex
	got map[email]int
}

type email struct{ user, post string }

func (o *outbox) send(user, postID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got[email{user, postID}]++
}

// check verifies that every subscriber of each post's category got exactly one email about it, and nobody
// else got any.
func (a *app) check(w io.Writer) error {
	a.outbox.mu.Lock()
	defer a.outbox.mu.Unlock()
	perPost := make(map[string]int)
	for e, n := range a.outbox.got {
		perPost[e.post] += n
	}
	total := 0
	for _, p := range posts {
		subs := a.subscribers[p.Category]
		for u := range subs {
			if n := a.outbox.got[email{strconv.Itoa(u), p.ID}]; n != 1 {
				return fmt.Errorf("user %d got %d emails about post %s, want 1", u, n, p.ID)
			}
		}
		if perPost[p.ID] != len(subs) {
			return fmt.Errorf("%d emails about post %s, want %d", perPost[p.ID], p.ID, len(subs))
		}
		total += len(subs)
		fmt.Fprintf(w, "outbox: post %s (%s): %d emails for %d subscribers\n", p.ID, p.Category, perPost[p.ID], len(subs))
	}
	if len(a.outbox.got) != total {
		return fmt.Errorf("emails to %d (user, post) pairs, want %d", len(a.outbox.got), total)
	}
	fmt.Fprintf(w, "outbox: %d emails: every subscriber got exactly one email per post in their category\n", total)
	return nil
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // posts and jobs always marshal
	}
	return string(b)
}

// chaos injects failures that do not depend on timing: a key chosen by the seed, with the given percent
// chance, fails on its first one or two attempts, whichever goroutine makes them.
type chaos struct {
	seed    uint64
	name    string // keeps the choices of two chaos values apart
	percent int

	mu       sync.Mutex
	attempts map[string]int
	failed   int
}

func newChaos(seed uint64, name string, percent int) *chaos {
	return &chaos{seed: seed, name: name, percent: percent, attempts: make(map[string]int)}
}

// fail counts an attempt for key and reports whether it fails.
func (c *chaos) fail(key string) bool {
	h := fnv.New64a()
	h.Write([]byte(c.name + "\x00" + key))
	r := rand.New(rand.NewPCG(c.seed, h.Sum64()))
	failures := 0
	if r.IntN(100) < c.percent {
		failures = 1 + r.IntN(2)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts[key]++
	if c.attempts[key] > failures {
		return false
	}
	c.failed++
	return true
}

// failures returns how many attempts failed.
func (c *chaos) failures() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}
