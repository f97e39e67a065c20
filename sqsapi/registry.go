package sqsapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unsafe"

	"github.com/fifoq/fifoq"
	"github.com/fifoq/fifoq/catalog"
	"github.com/fifoq/fifoq/internal/sigv4"
)

// The server's queues are a catalog.Catalog's: this file spells their names as the wire does (URLs, ARNs) and
// finds the namespace (account and region) a request acts in.

// arnOfName returns the ARN of the queue whose fifoq name is fn (a message's DeadLetterSource).
func (s *Server) arnOfName(fn string) string {
	k, _, _ := s.cat.Find(fn)
	return k.Namespace.QueueARN(k.Name)
}

// queueOfARN returns the queue an ARN names, if the server holds it.
func (s *Server) queueOfARN(a string) (catalog.Queue, bool) {
	ns, name, ok := catalog.ParseQueueARN(a)
	if !ok {
		return catalog.Queue{}, false
	}
	return s.cat.Queue(ns, name)
}

// defaultNS returns the default account and region (WithAccountID, WithRegion).
func (s *Server) defaultNS() catalog.Namespace {
	return catalog.Namespace{Account: s.account, Region: s.region}
}

// The namespace of a request: its account and region.
//
// The region is the one of the request's SigV4 credential scope (the Authorization header's Credential, or
// a presigned request's X-Amz-Credential), when it has the form of a region name (two letters, a hyphen,
// and so on: "eu-west-1", "us-gov-west-1") or is the server's default region; failing that, the first
// label of the request's host that has the form of a region name ("sqs.eu-west-1.localhost",
// "eu-west-1.queue.localhost", "sqs.eu-west-1.amazonaws.com"); failing that, the server's default region.
// The account is the access key id of the credential scope when it is a 12-digit number, else the
// server's default account.

// requestNS returns the namespace of the request (package sigv4 has the rule, which package snsapi shares).
func (s *Server) requestNS(r *http.Request) catalog.Namespace {
	account, region := sigv4.Namespace(r, s.account, s.region)
	return catalog.Namespace{Account: account, Region: region}
}

// scoped reports whether the request's region is that of its credential scope.
func (s *Server) scoped(r *http.Request) bool {
	_, region, _ := sigv4.Scope(r)
	return region == s.region || sigv4.IsRegionName(region)
}

// regionOfHost returns the first label of host that has the form of a region name, or "".
func regionOfHost(host string) string { return sigv4.HostRegion(host, "") }

// isRegionName reports whether v has the form of an AWS region name (package sigv4 has the rule).
func isRegionName(v string) bool {
	return sigv4.IsRegionName(v)
}

// isAccountID reports whether v is an AWS account id: 12 decimal digits.
func isAccountID(v string) bool { return sigv4.IsAccountID(v) }

// resolve returns the queue a QueueUrl names: a URL, whose path ends with /account/name (any host will
// do; the region is the request's) or is /queue/region/account/name (the region of a request without a
// credential scope is the one named), or a queue name alone, in the request's account and region. A query-protocol request without a QueueUrl may be sent to
// the queue's URL instead.
func (s *Server) resolve(c *call, queueURL string) (catalog.Queue, error) {
	// resolveBytes only reads the bytes and keeps none of them.
	return s.resolveBytes(c, unsafe.Slice(unsafe.StringData(queueURL), len(queueURL)))
}

// resolveBytes is resolve from the bytes of the QueueUrl, which it only reads: the actions on the hot path
// look their queue up from the request body, with no string made of the URL.
func (s *Server) resolveBytes(c *call, queueURL []byte) (catalog.Queue, error) {
	if len(queueURL) == 0 && !c.json && strings.Count(strings.Trim(c.r.URL.Path, "/"), "/") >= 1 {
		return s.resolve(c, c.r.URL.Path)
	}
	if len(queueURL) == 0 {
		return catalog.Queue{}, missing("QueueUrl")
	}
	path := queueURL
	if _, rest, ok := bytes.Cut(queueURL, schemeSep); ok {
		_, path, _ = bytes.Cut(rest, slash)
	}
	path, _, _ = bytes.Cut(path, question)
	path = bytes.Trim(path, "/")
	ns := s.requestNS(c.r)
	name := path
	if i := bytes.LastIndexByte(path, '/'); i >= 0 {
		name = path[i+1:]
		account := path[:i]
		if j := bytes.LastIndexByte(account, '/'); j >= 0 {
			// /queue/<region>/<account>/<name>: the URL names the queue's region (urlOf), which a request
			// without a credential scope acts in; a signed request acts in its scope's region, whatever the
			// URL names, as it does whatever the URL's host names.
			if region, ok := bytes.CutPrefix(account[:j], queuePathPrefix); ok && isRegionName(string(region)) &&
				!s.scoped(c.r) {
				ns.Region = string(region)
			}
			account = account[j+1:]
		}
		switch {
		case string(account) == ns.Account:
		case string(account) == s.account:
			ns.Account = s.account
		case isAccountID(string(account)):
			ns.Account = string(account)
		default:
			return catalog.Queue{}, s.unknownQueue(c, catalog.Namespace{Account: string(account), Region: ns.Region}, string(name))
		}
	}
	// The catalogue keeps no reference to the name it looks up.
	q, ok := s.cat.Queue(ns, unsafe.String(unsafe.SliceData(name), len(name)))
	if !ok {
		return catalog.Queue{}, s.unknownQueue(c, ns, string(name))
	}
	c.queue = q.Name()
	return q, nil
}

// urlOf returns the URL of q on the host the request was sent to: scheme://host/account/name, or, for a
// queue outside the server's default region requested from a host that names no region (one endpoint for
// every region, as most test set-ups have), scheme://host/queue/region/account/name, LocalStack's path form,
// so that queues of one name in two regions have two URLs. resolve takes either form, and the region of a
// host such as sqs.eu-west-1.localhost keeps the first.
func (s *Server) urlOf(c *call, ns catalog.Namespace, name string) string {
	account := ns.Account
	if ns.Region != s.region && regionOfHost(c.r.Host) == "" {
		account = "queue/" + ns.Region + "/" + account
	}
	return c.queueURL(account, name)
}

// Separators of resolveBytes.
var schemeSep, slash, question = []byte("://"), []byte("/"), []byte("?")

// queuePathPrefix starts the path of a queue URL that names its region (urlOf), after the leading slash.
var queuePathPrefix = []byte("queue/")

// createQueue creates a queue, or returns the existing one when attributes agree with it (CreateQueue): the
// catalogue's rule, from the attributes decoded. On a durable server the queue's definition is stored
// before it returns.
func (s *Server) createQueue(ctx context.Context, ns catalog.Namespace, name string, attrs map[string]string, tags map[string]string) (catalog.Queue, error) {
	fifo := strings.HasSuffix(name, ".fifo")
	if err := checkCreateType(name, fifo, attrs); err != nil {
		return catalog.Queue{}, err
	}
	set := &attrSet{}
	if len(attrs) > 0 {
		var aerr *apiError
		if set, aerr = s.parseAttributes(fifo, attrs, ns); aerr == nil {
			aerr = s.checkSources(ns, set)
		}
		if aerr != nil {
			if _, exists := s.cat.Queue(ns, name); !exists {
				if err := s.cat.CheckCreate(ns, name); err != nil {
					return catalog.Queue{}, coreError(err) // as SQS, before the attributes of a queue that cannot be created
				}
			}
			return catalog.Queue{}, aerr
		}
	}
	if len(tags) > 0 {
		set.def.Tags, set.fields = tags, set.fields|catalog.FieldTags
	}
	q, err := s.cat.CreateQueue(ctx, ns, name, set.def, set.fields)
	switch {
	case err == nil:
		return q, nil
	case fifoq.ErrorCode(err) == "" && !isContextErr(err):
		return catalog.Queue{}, fmt.Errorf("create queue %s: %w", ns.QueueARN(name), err) // a store's error: ServiceUnavailable (storeError)
	}
	return catalog.Queue{}, set.coreError(err, ns.QueueARN(name), fifo)
}

// deleteQueue deletes a queue (DeleteQueue). A queue that a request deleted meanwhile is deleted.
func (s *Server) deleteQueue(ctx context.Context, q catalog.Queue) error {
	err := s.cat.DeleteQueue(ctx, q.Namespace(), q.Name())
	if errors.Is(err, catalog.ErrQueueDoesNotExist) {
		return nil
	}
	return err
}
