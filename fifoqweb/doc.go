// Package fifoqweb is a web console for fifoq queues: an [http.Handler] a service mounts on a path of its
// admin port, over the queues it holds, in memory or durable ([New]), or over a catalogue of queues and
// topics such as fifoq serve's ([NewCatalog]).
//
// It shows every queue with its visible, in-flight and delayed counts, the age of its oldest message, its
// send, receive and delete rates, its dead-letter queue and the queues that feed it; per queue, its
// messages a page at a time (never copying the others, so a queue of a million messages pages as fast as a
// short one), filtered by state and group, and on a FIFO queue the groups blocked by an in-flight message.
// Reading changes nothing: it goes through [fifoq.Queue.MessagesAfter] and [fifoq.Queue.BlockedGroups].
//
// Charts show the last hour of each queue, of all queues together and of each topic: rates, counts and the
// age of the oldest message, sampled every 10 seconds in the process into a fixed ring per queue (about 13
// KB), drawn as SVG by the server. A search finds messages by id, group id, deduplication id or a part of
// their body, in one queue or all, within bounds ([WithSearchLimits]) that it says it reached. The server
// page shows the program that serves the console ([WithServerInfo]), its event source mappings and every
// redrive. A header on every page links them all.
//
// It sends a message, purges a queue, deletes a message, changes a message's visibility, and starts,
// watches and cancels a dead-letter queue redrive, each after a confirmation page, through the queue's own
// methods, so their rules and errors are those of the API. Its settings forms change a queue's attributes
// and redrive policy, and over a catalogue create and delete queues (with every attribute SQS takes at
// creation) and create topics, through the catalogue's own methods; they subscribe a queue to a topic with a
// filter policy and publish a test message. Each is checked by the rules of the wire API, refused beside
// its field, and confirmed first. [WithReadOnly] refuses every change with 403 Forbidden. Changes are POST
// forms, guarded by a token in a SameSite=Strict cookie and by [http.CrossOriginProtection].
//
// Pages are plain HTML from html/template and readable without JavaScript; a small script embedded in the
// package (no CDN, no build step) refreshes the counts every two seconds, and redraws the charts after
// each sample.
//
// The console has no login of its own: serve it on a loopback or admin address, or put it behind the
// service's authentication. Every link is relative, so it works under any prefix, mounted with
// [http.StripPrefix].
package fifoqweb
