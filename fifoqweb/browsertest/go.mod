module github.com/fifoq/fifoq/fifoqweb/browsertest

go 1.25.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/fifoq/fifoq v0.1.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/btree v1.1.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

