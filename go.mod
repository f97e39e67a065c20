module github.com/fifoq/fifoq

go 1.25.0

require github.com/google/btree v1.1.3 // indirect
