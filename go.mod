module github.com/prime-agent/prime

go 1.26

require github.com/go-json-experiment/json v1.27.2

require github.com/google/go-cmp v0.7.0

require golang.org/x/text v0.41.0
