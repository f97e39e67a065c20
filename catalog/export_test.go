package catalog

import "github.com/fifoq/fifoq"

// Test-only views into a catalogue's live queues, for tests that check the catalogue applied what it records.

// LiveAttributes returns the attributes of the live queue name of ns.
func LiveAttributes(c *Catalog, ns Namespace, name string) fifoq.Attributes {
	return c.lookup(ns, name).q.Attributes()
}

// LiveDeadLetterQueue returns the name, in ns, of the dead-letter queue the live queue name of ns moves its
// messages to, "" for none: its bound redrive policy, as opposed to the recorded one.
func LiveDeadLetterQueue(c *Catalog, ns Namespace, name string) string {
	d := c.lookup(ns, name).q.Attributes().DeadLetterQueue
	if d == nil {
		return ""
	}
	return c.keyOf(d.Name()).name
}
