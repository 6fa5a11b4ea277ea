package a2abus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/workers"
)

// The AsyncAPI document of the worker protocol and its validator, a small
// Node project pinning the official parser (@asyncapi/parser).
const (
	asyncAPIDoc      = "docs/asyncapi.yaml"
	asyncAPIProject  = "docs/asyncapi"
	asyncAPICredsSrc = "cmd/a2abus/credentials.go"
)

// TestAsyncAPIDocument validates docs/asyncapi.yaml with the official
// parser (which also checks every example against its schemas), checks the
// golden events of events/testdata/fold, as the events package encodes
// them, against the document's schemas, and checks that the document and
// the worker user's NATS permissions (workerPermissions in
// cmd/a2abus/credentials.go) describe the same subjects.
func TestAsyncAPIDocument(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to validate %s: %v", tool, asyncAPIDoc, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	installValidator(ctx, t)

	encoded := filepath.Join(t.TempDir(), "events.json")
	writeGoldenEvents(t, encoded)

	cmd := exec.CommandContext(ctx, "node", asyncAPIProject+"/validate.mjs", "--addresses", "--events", encoded, asyncAPIDoc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s is not valid (%v):\n%s%s", asyncAPIDoc, err, stderr.String(), stdout.String())
	}
	t.Logf("%s%s", stderr.String(), stdout.String())

	var addresses []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if a, ok := strings.CutPrefix(line, "address "); ok {
			addresses = append(addresses, a)
		}
	}
	if len(addresses) == 0 {
		t.Fatalf("the validator listed no channel addresses:\n%s", stdout.String())
	}
	checkPermissionsCovered(t, addresses)
}

// installValidator runs npm ci in the validator's project unless its
// node_modules is newer than its lockfile.
func installValidator(ctx context.Context, t *testing.T) {
	lock, err := os.Stat(filepath.Join(asyncAPIProject, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	// npm writes node_modules/.package-lock.json at the end of every
	// install, so it dates the last complete one.
	stamp, err := os.Stat(filepath.Join(asyncAPIProject, "node_modules", ".package-lock.json"))
	if err == nil && !stamp.ModTime().Before(lock.ModTime()) {
		return
	}
	start := time.Now()
	out, err := exec.CommandContext(ctx, "npm", "ci", "--prefix", asyncAPIProject, "--no-audit", "--no-fund").CombinedOutput()
	if err != nil {
		t.Fatalf("npm ci --prefix %s: %v\n%s", asyncAPIProject, err, out)
	}
	t.Logf("npm ci --prefix %s took %v", asyncAPIProject, time.Since(start).Round(time.Millisecond))
}

// writeGoldenEvents encodes the events of events/testdata/fold/*/events.json
// with events.Encode and writes their headers and bodies to path, for the
// validator's --events check.
func writeGoldenEvents(t *testing.T, path string) {
	t.Helper()
	files, err := filepath.Glob("events/testdata/fold/*/events.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden events: %v", err)
	}
	type golden struct {
		Seq    uint64          `json:"seq"`
		Type   events.Type     `json:"type"`
		Tenant string          `json:"tenant"`
		TaskID a2a.TaskID      `json:"taskId"`
		Lease  string          `json:"lease"`
		Time   time.Time       `json:"time"`
		Body   json.RawMessage `json:"body"`
	}
	type encodedEvent struct {
		Name    string            `json:"name"`
		Type    events.Type       `json:"type"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	}
	var out []encodedEvent
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var script []golden
		if err := json.Unmarshal(raw, &script); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range script {
			name := fmt.Sprintf("%s seq %d", filepath.Base(filepath.Dir(f)), g.Seq)
			var body any
			switch g.Type {
			case events.TypeCreated:
				body = new(events.Created)
			case events.TypeInput:
				body = new(events.Input)
			case events.TypeStatus:
				body = new(a2a.TaskStatusUpdateEvent)
			case events.TypeArtifact:
				body = new(a2a.TaskArtifactUpdateEvent)
			default:
				t.Fatalf("%s: unknown type %q", name, g.Type)
			}
			if err := json.Unmarshal(g.Body, body); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			m, err := events.Encode(events.Event{
				ID: fmt.Sprintf("golden-%d", g.Seq), Type: g.Type, Tenant: g.Tenant, TaskID: g.TaskID,
				Lease: g.Lease, Time: g.Time, Body: body,
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			h := map[string]string{}
			for k, v := range m.Header {
				h[k] = v[0]
			}
			out = append(out, encodedEvent{Name: name, Type: g.Type, Headers: h, Body: m.Data})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// receivedThroughConsumer are the channel addresses a worker gets messages
// of without publishing or subscribing to them: the work items, which the
// consumer delivers to the worker's inbox.
var receivedThroughConsumer = []string{"a2a.evt.{tenant}.{task}.in"}

// checkPermissionsCovered checks that each subject the worker user may
// publish or subscribe to is the address of a channel of the document (up
// to wildcards), and that each channel's address is one the worker may use.
func checkPermissionsCovered(t *testing.T, addresses []string) {
	pub, sub := workerPermissionSubjects(t)
	if len(pub) == 0 || len(sub) == 0 {
		t.Fatalf("read no permissions from %s: publish %q, subscribe %q", asyncAPICredsSrc, pub, sub)
	}
	perms := append(slices.Clone(pub), sub...)
	for _, p := range perms {
		if !slices.ContainsFunc(addresses, func(a string) bool { return subjectCovers(p, a) }) {
			t.Errorf("the worker permission %q (%s, workerPermissions) is the address of no channel of %s", p, asyncAPICredsSrc, asyncAPIDoc)
		}
	}
	for _, a := range addresses {
		if slices.Contains(receivedThroughConsumer, a) {
			continue
		}
		if !slices.ContainsFunc(perms, func(p string) bool { return subjectCovers(p, a) }) {
			t.Errorf("the channel address %q of %s is allowed by no worker permission of %s (workerPermissions)", a, asyncAPIDoc, asyncAPICredsSrc)
		}
	}
}

// subjectCovers reports whether every subject the channel address a can
// stand for matches the NATS subject pattern p. An address parameter
// ({name}) stands for any token(s), so it is matched only by a wildcard
// of p, or by the same parameter written in p ({tenant}).
func subjectCovers(p, a string) bool {
	pt, at := strings.Split(p, "."), strings.Split(a, ".")
	for i, tok := range pt {
		if tok == ">" {
			return i < len(at)
		}
		if i >= len(at) || at[i] == ">" {
			return false
		}
		if tok != "*" && tok != at[i] {
			return false
		}
	}
	return len(pt) == len(at)
}

// workerPermissionSubjects evaluates the subject lists of workerPermissions
// in cmd/a2abus/credentials.go (package main, so read as source) for the
// tenant "{tenant}" and the default stream and bucket names.
func workerPermissionSubjects(t *testing.T) (publish, subscribe []string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, asyncAPICredsSrc, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := &permEval{
		funcs: map[string]*ast.FuncDecl{},
		consts: map[string]string{
			"events.EventsPrefix": events.EventsPrefix,
			"events.KindIn":       string(events.KindIn),
			"events.KindStatus":   string(events.KindStatus),
			"events.KindArtifact": string(events.KindArtifact),
			"events.KindControl":  string(events.KindControl),
		},
		calls: map[string]func(string) string{
			"workers.AgentConsumer": workers.AgentConsumer,
		},
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			ev.funcs[fd.Name.Name] = fd
		}
	}
	fn := ev.funcs["workerPermissions"]
	if fn == nil {
		t.Fatalf("%s has no func workerPermissions", asyncAPICredsSrc)
	}
	cfg := engine.DefaultConfig()
	vars := map[string]string{}
	args := []string{"{tenant}", cfg.EventsStream, cfg.AgentsBucket}
	if err := ev.bind(fn, args, vars); err != nil {
		t.Fatal(err)
	}
	for _, st := range fn.Body.List {
		as, ok := st.(*ast.AssignStmt)
		if !ok || as.Tok != token.DEFINE || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			continue
		}
		v, err := ev.eval(as.Rhs[0], vars)
		if err != nil {
			t.Fatalf("workerPermissions: %s: %v", fset.Position(as.Pos()), err)
		}
		vars[as.Lhs[0].(*ast.Ident).Name] = v
	}
	// The lists are the Allow fields under Publish and Subscribe.
	var evalErr error
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil || (key.Name != "Publish" && key.Name != "Subscribe") {
			return true
		}
		ast.Inspect(kv.Value, func(n ast.Node) bool {
			allow, ok := n.(*ast.KeyValueExpr)
			if !ok || !isIdent(allow.Key, "Allow") {
				return true
			}
			list, ok := allow.Value.(*ast.CompositeLit)
			if !ok {
				evalErr = fmt.Errorf("%s: Allow is not a list literal", fset.Position(allow.Pos()))
				return false
			}
			for _, el := range list.Elts {
				s, err := ev.eval(el, vars)
				if err != nil {
					evalErr = fmt.Errorf("%s: %w", fset.Position(el.Pos()), err)
					return false
				}
				if key.Name == "Publish" {
					publish = append(publish, s)
				} else {
					subscribe = append(subscribe, s)
				}
			}
			return false
		})
		return false
	})
	if evalErr != nil {
		t.Fatalf("workerPermissions: %v", evalErr)
	}
	return publish, subscribe
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// permEval evaluates the string expressions of credentials.go: literals,
// concatenations, variables, string conversions, the listed constants and
// functions of other packages, and the file's own one-line functions.
// Anything else is an error, so a change there fails the test instead of
// passing unchecked.
type permEval struct {
	funcs  map[string]*ast.FuncDecl
	consts map[string]string
	calls  map[string]func(string) string
}

func (e *permEval) bind(fn *ast.FuncDecl, args []string, vars map[string]string) error {
	i := 0
	for _, field := range fn.Type.Params.List {
		for _, name := range field.Names {
			if i >= len(args) {
				return fmt.Errorf("func %s: more parameters than arguments", fn.Name.Name)
			}
			vars[name.Name] = args[i]
			i++
		}
	}
	if i != len(args) {
		return fmt.Errorf("func %s takes %d parameters, want %d", fn.Name.Name, i, len(args))
	}
	return nil
}

func (e *permEval) eval(x ast.Expr, vars map[string]string) (string, error) {
	switch x := x.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return "", fmt.Errorf("non-string literal %s", x.Value)
		}
		return strconv.Unquote(x.Value)
	case *ast.ParenExpr:
		return e.eval(x.X, vars)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", fmt.Errorf("operator %s", x.Op)
		}
		l, err := e.eval(x.X, vars)
		if err != nil {
			return "", err
		}
		r, err := e.eval(x.Y, vars)
		return l + r, err
	case *ast.Ident:
		if v, ok := vars[x.Name]; ok {
			return v, nil
		}
		return "", fmt.Errorf("unknown identifier %s", x.Name)
	case *ast.SelectorExpr:
		name := selectorName(x)
		if v, ok := e.consts[name]; ok {
			return v, nil
		}
		return "", fmt.Errorf("unknown value %s: add it to the test's constants", name)
	case *ast.CallExpr:
		if len(x.Args) != 1 {
			return "", errors.New("call with other than one argument")
		}
		arg, err := e.eval(x.Args[0], vars)
		if err != nil {
			return "", err
		}
		if isIdent(x.Fun, "string") {
			return arg, nil
		}
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			if f, ok := e.calls[selectorName(sel)]; ok {
				return f(arg), nil
			}
			return "", fmt.Errorf("unknown function %s: add it to the test's functions", selectorName(sel))
		}
		if id, ok := x.Fun.(*ast.Ident); ok {
			fd := e.funcs[id.Name]
			if fd == nil || len(fd.Body.List) != 1 {
				return "", fmt.Errorf("function %s is not a one-line function of the file", id.Name)
			}
			ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				return "", fmt.Errorf("function %s does not return one value", id.Name)
			}
			local := map[string]string{}
			if err := e.bind(fd, []string{arg}, local); err != nil {
				return "", err
			}
			return e.eval(ret.Results[0], local)
		}
		return "", errors.New("unsupported call")
	}
	return "", fmt.Errorf("unsupported expression %T", x)
}

func selectorName(s *ast.SelectorExpr) string {
	if id, ok := s.X.(*ast.Ident); ok {
		return id.Name + "." + s.Sel.Name
	}
	return "?." + s.Sel.Name
}
