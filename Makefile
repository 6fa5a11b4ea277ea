# a2abus: every CI step is one of these targets.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.Version=$(VERSION)
PKGS      := ./...

.PHONY: run build test test-short bench lint verify fuzz clean

# Start the server with embedded NATS and the demo agent on 127.0.0.1:8080.
run: build
	./bin/a2abus serve

# Build the a2abus binary into bin/.
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/a2abus ./cmd/a2abus

# Run every test with the race detector (what CI runs).
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# Run the tests without the race detector, for a quick local loop.
test-short:
	$(GO) test -count=1 -timeout 10m $(PKGS)

# Run the benchmarks (not part of test): load against a2abus and a2a-go, append+fold.
bench:
	$(GO) test -run '^$$' -bench SendMessage -benchtime 1x -timeout 30m ./cmd/a2abus/
	$(GO) test -run '^$$' -bench Stream -benchtime 1x -timeout 30m ./cmd/a2abus/
	$(GO) test -run '^$$' -bench Push -benchtime 1x -timeout 30m ./cmd/a2abus/
	$(GO) test -run '^$$' -bench . -benchmem ./events/ ./tasklog/ ./jwks/

# Run each fuzz target for a short while.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./events/
	$(GO) test -run '^$$' -fuzz FuzzJSONRPC -fuzztime 30s ./edge/
	$(GO) test -run '^$$' -fuzz FuzzREST -fuzztime 30s ./edge/

# Check formatting, vet and staticcheck.
lint:
	@test -z "$$(gofmt -l .)" || (gofmt -l . && echo "gofmt needed" && exit 1)
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

# lint, plus go.mod tidiness and the import rules.
verify: lint
	$(GO) mod tidy -diff
	$(GO) test -count=1 -run TestImportRules .

# Remove build output and the default data directory.
clean:
	rm -rf bin data
