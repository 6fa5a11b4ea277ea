package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Subprocess helpers: the real a2abus binary, started, killed and
// restarted by the durability, push and benchmark tests.

// Durations of the durability test's waits. They are generous: the
// machine running the tests may be slow and busy.
const (
	buildTimeout    = 5 * time.Minute
	readyTimeout    = 60 * time.Second
	rpcTimeout      = 30 * time.Second
	midWorkTimeout  = 20 * time.Second
	resumeTimeout   = 30 * time.Second
	killTimeout     = 15 * time.Second
	shutdownTimeout = 15 * time.Second
	pollEvery       = 50 * time.Millisecond
)

// buildBinary builds the a2abus command into a temporary directory, with
// the race detector if this test binary has it (its packages are then in
// the build cache already).
func buildBinary(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "a2abus")
	args := []string{"build", "-o", bin}
	if raceEnabled() {
		args = append(args, "-race")
	}
	args = append(args, "./")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, args...)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("go %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return bin
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// childEnv is the test's environment without A2ABUS_ variables, so the
// child's configuration is only its flags.
func childEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "A2ABUS_") })
}

// proc is a running a2abus serve subprocess.
type proc struct {
	t       testing.TB
	name    string
	cmd     *exec.Cmd
	URL     string // http://127.0.0.1:port
	NATSURL string // the NATS it serves or uses

	mu     sync.Mutex
	stderr bytes.Buffer // everything the child logged

	done    chan struct{} // closed once the child has exited
	waitErr error         // cmd.Wait's result, set before done closes
}

// The log lines that tell a child's addresses.
var (
	httpListening = regexp.MustCompile(`msg="http listening" addr=(\S+)`)
	readyNATS     = regexp.MustCompile(` msg=ready nats=(\S+)`)
)

// startProc starts bin serve on data with random ports, --worker-ack-wait
// 2s and the extra flags (which win), and waits until it logs ready. It
// reads stderr until the child exits so the child never blocks on a full
// pipe. At test cleanup a child still running is killed, and on failure
// its log goes to t.Log.
func startProc(t testing.TB, name, bin, data string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve",
		"--data", data,
		"--http", "127.0.0.1:0",
		"--nats-listen", "127.0.0.1:0",
		"--worker-ack-wait", "2s",
		"--log-level", "info"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = childEnv()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, name: name, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	addr := make(chan string, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		sawAddr, sawReady := false, false
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			if p.stderr.Len() < 4<<20 {
				p.stderr.WriteString(line)
				p.stderr.WriteByte('\n')
			}
			p.mu.Unlock()
			if m := httpListening.FindStringSubmatch(line); m != nil && !sawAddr {
				sawAddr = true
				addr <- m[1]
			}
			if m := readyNATS.FindStringSubmatch(line); m != nil && !sawReady {
				sawReady = true
				ready <- m[1]
			}
		}
		// Drain whatever a scanner error left, then reap the child. Wait
		// must come after the last read from the pipe.
		_, _ = io.Copy(io.Discard, pipe)
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.exited() {
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, p.log())
		}
	})

	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	var httpAddr string
	select {
	case httpAddr = <-addr:
	case <-p.done:
		t.Fatalf("%s exited before listening: %v", name, p.waitErr)
	case <-deadline.C:
		t.Fatalf("%s: no \"http listening\" line after %v", name, readyTimeout)
	}
	select {
	case p.NATSURL = <-ready:
	case <-p.done:
		t.Fatalf("%s exited before ready: %v", name, p.waitErr)
	case <-deadline.C:
		t.Fatalf("%s: not ready after %v", name, readyTimeout)
	}
	p.URL = "http://" + httpAddr
	// The ready line shows no password: take the URL given, or an
	// embedded server's admin URL from its credentials file.
	if i := slices.Index(extra, "--nats-url"); i >= 0 && i+1 < len(extra) {
		p.NATSURL = extra[i+1]
	} else if env, err := readEnvFile(filepath.Join(data, credentialsDir, adminEnvFile)); err == nil {
		p.NATSURL = env[envToolURL]
	}
	return p
}

// Pid returns the child's process id.
func (p *proc) Pid() int { return p.cmd.Process.Pid }

// stop ends the child: SIGTERM, then SIGKILL if it has not exited within
// shutdownTimeout.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Logf("%s: SIGTERM: %v", p.name, err)
	}
	timer := time.NewTimer(shutdownTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitExit waits up to d for the child to exit and returns Wait's error.
func (p *proc) waitExit(d time.Duration) error {
	p.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
		return p.waitErr
	case <-timer.C:
		p.t.Fatalf("%s did not exit within %v", p.name, d)
		return nil
	}
}
