package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/workers"
)

// The embedded NATS server admits only known users: the admin user (the
// edge itself, the demo agent, the a2abus tools) and one worker user per
// tenant of --worker-tenants, whose permissions keep it to its tenant's
// work (docs/worker-protocol.md, "Credentials"). Their passwords live in
// <data>/credentials: generated on first start, kept across restarts, and
// taken from there if an operator wrote them first.
const (
	credentialsDir = "credentials"
	adminUser      = "a2abus"
	adminEnvFile   = "admin.env"
)

// Keys of the credentials files.
const (
	envToolURL        = "A2ABUS_NATS_URL"
	envWorkerURL      = "A2A_NATS_URL"
	envWorkerUser     = "A2A_NATS_USER"
	envWorkerPassword = "A2A_NATS_PASSWORD"
	envWorkerTenant   = "A2A_TENANT"
	envWorkerConsumer = "A2A_CONSUMER"
	envWorkerInbox    = "A2A_INBOX_PREFIX"
	envWorkerStream   = "A2A_STREAM"
)

// credentials are the users of the embedded server.
type credentials struct {
	dir           string
	adminPassword string
	workers       []workerCredentials
}

type workerCredentials struct {
	tenant, user, password string
}

// WorkerUser is the NATS user of tenant's workers.
func workerUser(tenant string) string { return "worker-" + tenant }

// workerInbox is the inbox prefix tenant's workers must use: the only
// reply subjects they may subscribe to.
func workerInbox(tenant string) string { return "_INBOX_" + tenant }

// loadCredentials reads the passwords in <data>/credentials, making the
// missing ones.
func loadCredentials(data string, tenants []string) (*credentials, error) {
	c := &credentials{dir: filepath.Join(data, credentialsDir)}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	var err error
	if c.adminPassword, err = c.password(adminEnvFile, envToolURL); err != nil {
		return nil, err
	}
	for _, t := range tenants {
		pw, err := c.password(t+".env", envWorkerPassword)
		if err != nil {
			return nil, err
		}
		c.workers = append(c.workers, workerCredentials{tenant: t, user: workerUser(t), password: pw})
	}
	return c, nil
}

// password returns the password kept in file under key (for the URL key,
// the password of the URL's user info), or a new random one.
func (c *credentials) password(file, key string) (string, error) {
	env, err := readEnvFile(filepath.Join(c.dir, file))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("credentials: %w", err)
	}
	v := env[key]
	if key == envToolURL && v != "" {
		u, err := url.Parse(v)
		if err != nil || u.User == nil {
			return "", fmt.Errorf("credentials: %s: %s is not a URL with user info", file, key)
		}
		v, _ = u.User.Password()
	}
	if v != "" {
		return v, nil
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// users returns the server's users with their permissions.
func (c *credentials) users(stream, agentsBucket string) []*server.User {
	users := []*server.User{{Username: adminUser, Password: c.adminPassword}}
	for _, w := range c.workers {
		users = append(users, &server.User{Username: w.user, Password: w.password,
			Permissions: workerPermissions(w.tenant, stream, agentsBucket)})
	}
	return users
}

// workerPermissions limits a worker to its tenant: take the tenant's work
// items from its agent's consumer, read the last events of the tenant's
// tasks, append status and artifact events to them, watch their status,
// and register the tenant's agent card. It cannot create consumers (a
// consumer's filter could name another tenant), read by sequence, write
// task input or touch another tenant's subjects.
func workerPermissions(tenant, stream, agentsBucket string) *server.Permissions {
	evt := events.EventsPrefix + tenant + ".*."
	cons := workers.AgentConsumer(tenant)
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			evt + string(events.KindStatus),
			evt + string(events.KindArtifact),
			"$JS.API.INFO",
			"$JS.API.CONSUMER.INFO." + stream + "." + cons,
			"$JS.API.CONSUMER.MSG.NEXT." + stream + "." + cons,
			"$JS.ACK." + stream + "." + cons + ".>",
			"$JS.API.DIRECT.GET." + stream + "." + events.EventsPrefix + tenant + ".>",
			"$KV." + agentsBucket + "." + tenant,
			"$JS.API.STREAM.INFO.KV_" + agentsBucket,
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{
			evt + string(events.KindStatus),
			workerInbox(tenant) + ".>",
		}},
	}
}

// write writes the credentials files for a server at clientURL: the
// admin URL for the tools and one environment file per worker tenant.
func (c *credentials) write(clientURL, stream string) error {
	u, err := url.Parse(clientURL)
	if err != nil {
		return fmt.Errorf("credentials: client URL: %w", err)
	}
	admin := *u
	admin.User = url.UserPassword(adminUser, c.adminPassword)
	if err := writeEnvFile(filepath.Join(c.dir, adminEnvFile), [][2]string{{envToolURL, admin.String()}}); err != nil {
		return err
	}
	for _, w := range c.workers {
		err := writeEnvFile(filepath.Join(c.dir, w.tenant+".env"), [][2]string{
			{envWorkerURL, clientURL},
			{envWorkerUser, w.user},
			{envWorkerPassword, w.password},
			{envWorkerTenant, w.tenant},
			{envWorkerStream, stream},
			{envWorkerConsumer, workers.AgentConsumer(w.tenant)},
			{envWorkerInbox, workerInbox(w.tenant)},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// adminURL returns clientURL with the admin user's credentials.
func (c *credentials) adminURL(clientURL string) string {
	u, err := url.Parse(clientURL)
	if err != nil {
		return clientURL
	}
	u.User = url.UserPassword(adminUser, c.adminPassword)
	return u.String()
}

// readEnvFile reads KEY=value lines; blank lines and # comments are
// skipped.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: line %q is not KEY=value", path, line)
		}
		env[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return env, sc.Err()
}

// writeEnvFile writes KEY=value lines readable only by the owner, in a
// form a POSIX shell can source.
func writeEnvFile(path string, kvs [][2]string) error {
	var b strings.Builder
	b.WriteString("# written by a2abus serve; edit the password to choose it\n")
	for _, kv := range kvs {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return nil
}
