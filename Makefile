# a2abus: every CI step is one of these targets.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.Version=$(VERSION)
PKGS      := ./...

PYTHON    ?= python3
NPM       ?= npm
PYW       := workers/examples/python
TSW       := workers/examples/typescript
# Tenants served by the example workers under make run.
WORKER_TENANTS ?= python,typescript

.PHONY: run build test test-short bench lint verify fuzz clean worker-deps worker-python worker-typescript

# Start the server with embedded NATS and the demo agent on 127.0.0.1:8080;
# the tenants python and typescript wait for the example workers.
run: build
	./bin/a2abus serve --worker-tenants $(WORKER_TENANTS)

# Start the example Python / TypeScript worker against make run's server.
worker-python: $(PYW)/.venv/.installed
	set -a && . ./data/credentials/python.env && set +a && exec $(PYW)/.venv/bin/python $(PYW)/worker.py

worker-typescript: $(TSW)/dist/.built
	set -a && . ./data/credentials/typescript.env && set +a && exec node $(TSW)/dist/worker.js

# What the worker examples and their tests need: a venv with the pinned
# requirements, npm ci and a tsc build.
worker-deps: $(PYW)/.venv/.installed $(TSW)/dist/.built

$(PYW)/.venv/.installed: $(PYW)/requirements.txt
	$(PYTHON) -m venv $(PYW)/.venv
	$(PYW)/.venv/bin/pip install --quiet --disable-pip-version-check -r $(PYW)/requirements.txt
	touch $@

$(TSW)/node_modules/.installed: $(TSW)/package-lock.json
	cd $(TSW) && $(NPM) ci --no-audit --no-fund
	touch $@

$(TSW)/dist/.built: $(TSW)/node_modules/.installed $(wildcard $(TSW)/src/*.ts) $(TSW)/tsconfig.json
	cd $(TSW) && $(NPM) run build
	touch $@

# Build the a2abus binary into bin/.
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/a2abus ./cmd/a2abus

# Run every test with the race detector (what CI runs).
test: worker-deps
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# Run the tests without the race detector, for a quick local loop.
test-short: worker-deps
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
	rm -rf bin data $(PYW)/.venv $(TSW)/node_modules $(TSW)/dist
