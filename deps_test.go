// Package a2abus_test holds repository-wide checks.
package a2abus_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/a2abus/a2abus"

// allowed lists, for each package, the packages of this module its
// non-test code may import (docs/architecture.md, "Packages"). Imports
// point toward events; projections and workers never import engine;
// engine never imports edge; nothing imports cmd.
var allowed = map[string][]string{
	"events":            {},
	"tasklog":           {"events"},
	"engine":            {"events", "tasklog"},
	"projections":       {"events", "tasklog"},
	"workers":           {"events", "tasklog"},
	"jwks":              {},
	"webhook":           {"events", "tasklog", "jwks"},
	"edge":              {"events", "engine", "projections", "webhook", "jwks"},
	"cmd/a2abus":        {"events", "tasklog", "engine", "projections", "workers", "webhook", "jwks", "edge"},
	"internal/natstest": {},
}

// thirdParty lists the only non-standard-library modules a package may
// import: events stays a pure data and codec package, jwks a pure JOSE one.
var thirdParty = map[string][]string{
	"events": {"github.com/a2aproject/a2a-go/v2/a2a", "github.com/nats-io/nats.go"},
	"jwks":   {"github.com/golang-jwt/jwt/v5", "github.com/lestrrat-go/jwx/v3", "github.com/lestrrat-go/httprc/v3"},
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, "\t")
		pkg := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		rules, ok := allowed[pkg]
		if !ok {
			if pkg != "" {
				t.Errorf("package %s has no import rule; add it to allowed", pkg)
			}
			continue
		}
		seen++
		for _, imp := range strings.Fields(imports) {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				if !slices.Contains(rules, rest) {
					t.Errorf("%s imports %s; allowed: %v", pkg, rest, rules)
				}
				continue
			}
			if tp, ok := thirdParty[pkg]; ok && strings.Contains(strings.Split(imp, "/")[0], ".") {
				if !slices.ContainsFunc(tp, func(p string) bool { return imp == p || strings.HasPrefix(imp, p+"/") }) {
					t.Errorf("%s imports %s; allowed third-party: %v", pkg, imp, tp)
				}
			}
		}
	}
	if seen < len(allowed) {
		t.Errorf("checked %d packages, want %d: a package moved?", seen, len(allowed))
	}
}
