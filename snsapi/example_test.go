package snsapi_test

import (
	"encoding/xml"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/fifoq/fifoq/snsapi"
	"github.com/fifoq/fifoq/sqsapi"
)

// SNS and SQS on one endpoint, as fifoq serve runs them: a query-protocol CreateTopic goes to the SNS
// server, whose topics are kept in the SQS server's catalogue beside its queues.
func ExampleRoute() {
	sqs := sqsapi.NewServer()
	sns := snsapi.NewServer(sqs.Catalog())
	hs := httptest.NewServer(snsapi.Route(sns, sqs))
	defer hs.Close()

	resp, err := http.PostForm(hs.URL, url.Values{"Action": {"CreateTopic"}, "Name": {"orders"}})
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		TopicArn string `xml:"CreateTopicResult>TopicArn"`
	}
	if err := xml.NewDecoder(resp.Body).Decode(&out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, out.TopicArn)
	fmt.Println(len(sqs.Catalog().Topics()), "topic in the catalogue")
	// Output:
	// 200 arn:aws:sns:us-east-1:000000000000:orders
	// 1 topic in the catalogue
}
