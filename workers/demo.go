package workers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Demo skill limits.
const (
	// MaxSlowSeconds caps the duration of the slow skill.
	MaxSlowSeconds = 3600
	// defaultSlowSeconds is the duration of "slow" without a number.
	defaultSlowSeconds = 5
	// MaxStreamChunks caps the chunks of the stream skill; MaxStreamInterval
	// caps its interval in milliseconds.
	MaxStreamChunks         = 100000
	MaxStreamIntervalMS     = 60000
	defaultStreamChunks     = 10
	defaultStreamIntervalMS = 100
	// streamStatusEvery is how many chunks pass between two status messages.
	streamStatusEvery = 50
)

// DemoSkills describes the demo agent's skills for its agent card.
func DemoSkills() []a2a.AgentSkill {
	return []a2a.AgentSkill{
		{
			ID: "echo", Name: "Echo",
			Description: "Completes at once with an artifact holding the parts of your message.",
			Tags:        []string{"demo", "echo"}, Examples: []string{"echo hello"},
		},
		{
			ID: "ask", Name: "Ask",
			Description: "Asks you a question (INPUT_REQUIRED) and completes with your answer.",
			Tags:        []string{"demo", "multi-turn"}, Examples: []string{"ask"},
		},
		{
			ID: "stream", Name: "Stream",
			Description: fmt.Sprintf("stream <chunks> <interval-ms>: streams one artifact in that many chunks (default %d, at most %d), one every interval (default %d ms), with status messages; resumes where it stopped after a restart.", defaultStreamChunks, MaxStreamChunks, defaultStreamIntervalMS),
			Tags:        []string{"demo", "streaming"}, Examples: []string{"stream 20 100"},
		},
		{
			ID: "slow", Name: "Slow",
			Description: fmt.Sprintf("Works for the given number of seconds (default %d, at most %d), posting progress every second, then completes. Survives server restarts.", defaultSlowSeconds, MaxSlowSeconds),
			Tags:        []string{"demo", "long-running"}, Examples: []string{"slow 10"},
		},
	}
}

// Demo is the handler of the built-in demo agent. The skill is the first
// word of the first text part of the task's first message, or the message
// metadata "skill"; unknown skills echo.
func Demo(ctx context.Context, t *Task) error {
	v := t.View()
	first := t.Input
	if len(v.Task.History) > 0 {
		first = v.Task.History[0]
	}
	skill, args := parseSkill(first)
	switch skill {
	case "ask":
		return demoAsk(ctx, t, first)
	case "slow":
		return demoSlow(ctx, t, args)
	case "stream":
		return demoStream(ctx, t, args)
	default:
		return demoEcho(ctx, t)
	}
}

func parseSkill(m *a2a.Message) (string, []string) {
	if m == nil {
		return "echo", nil
	}
	var words []string
	for _, p := range m.Parts {
		if txt := p.Text(); txt != "" {
			words = strings.Fields(txt)
			break
		}
	}
	if s, ok := m.Metadata["skill"].(string); ok && s != "" {
		return strings.ToLower(s), words
	}
	if len(words) == 0 {
		return "echo", nil
	}
	return strings.ToLower(words[0]), words[1:]
}

func demoEcho(ctx context.Context, t *Task) error {
	parts := t.Input.Parts
	if err := t.Artifact(ctx, &a2a.Artifact{ID: "echo", Name: "echo", Parts: parts}, false, true); err != nil {
		return err
	}
	return t.Status(ctx, a2a.TaskStateCompleted, nil)
}

func demoAsk(ctx context.Context, t *Task, first *a2a.Message) error {
	if t.Input == nil || t.Input.ID == first.ID {
		return t.Status(ctx, a2a.TaskStateInputRequired,
			AgentMessage(a2a.NewTextPart("What is your name?")))
	}
	answer := ""
	for _, p := range t.Input.Parts {
		answer += p.Text()
	}
	greeting := "Hello, " + strings.TrimSpace(answer) + "!"
	if err := t.Artifact(ctx, &a2a.Artifact{ID: "answer", Name: "answer", Parts: a2a.ContentParts{a2a.NewTextPart(greeting)}}, false, true); err != nil {
		return err
	}
	return t.Status(ctx, a2a.TaskStateCompleted, AgentMessage(a2a.NewTextPart(greeting)))
}

// progressPrefix starts the slow skill's progress messages; a resumed task
// counts them to continue where the last worker stopped.
const progressPrefix = "progress "

func demoSlow(ctx context.Context, t *Task, args []string) error {
	secs := defaultSlowSeconds
	if len(args) > 0 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 || n > MaxSlowSeconds {
			return t.Status(ctx, a2a.TaskStateRejected, AgentMessage(a2a.NewTextPart(
				fmt.Sprintf("slow takes a whole number of seconds from 0 to %d", MaxSlowSeconds))))
		}
		secs = n
	}
	done := 0
	for _, m := range t.View().Task.History {
		if m.Role == a2a.MessageRoleAgent && len(m.Parts) > 0 && strings.HasPrefix(m.Parts[0].Text(), progressPrefix) {
			done++
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done < secs {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		done++
		msg := AgentMessage(a2a.NewTextPart(fmt.Sprintf("%s%d/%d", progressPrefix, done, secs)))
		if err := t.Status(ctx, a2a.TaskStateWorking, msg); err != nil {
			return err
		}
	}
	out := fmt.Sprintf("worked for %d seconds", secs)
	if err := t.Artifact(ctx, &a2a.Artifact{ID: "result", Name: "result", Parts: a2a.ContentParts{a2a.NewTextPart(out)}}, false, true); err != nil {
		return err
	}
	return t.Status(ctx, a2a.TaskStateCompleted, nil)
}

// demoStream emits the artifact "stream" in chunks. A resumed task counts
// the chunks already in the artifact and goes on from there.
func demoStream(ctx context.Context, t *Task, args []string) error {
	chunks, interval := defaultStreamChunks, defaultStreamIntervalMS
	bad := func() error {
		return t.Status(ctx, a2a.TaskStateRejected, AgentMessage(a2a.NewTextPart(fmt.Sprintf(
			"usage: stream <chunks 1..%d> <interval-ms 0..%d>", MaxStreamChunks, MaxStreamIntervalMS))))
	}
	if len(args) > 0 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > MaxStreamChunks {
			return bad()
		}
		chunks = n
	}
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 0 || n > MaxStreamIntervalMS {
			return bad()
		}
		interval = n
	}
	done := 0
	for _, a := range t.View().Task.Artifacts {
		if a.ID == "stream" {
			done = len(a.Parts)
		}
	}
	if done == 0 {
		msg := AgentMessage(a2a.NewTextPart(fmt.Sprintf("streaming %d chunks every %d ms", chunks, interval)))
		if err := t.Status(ctx, a2a.TaskStateWorking, msg); err != nil {
			return err
		}
	}
	var tick <-chan time.Time
	if interval > 0 {
		tk := time.NewTicker(time.Duration(interval) * time.Millisecond)
		defer tk.Stop()
		tick = tk.C
	}
	for i := done + 1; i <= chunks; i++ {
		if tick != nil {
			select {
			case <-tick:
			case <-ctx.Done():
				return ctx.Err()
			}
		} else if err := ctx.Err(); err != nil {
			return err
		}
		art := &a2a.Artifact{ID: "stream", Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprintf("chunk %d/%d\n", i, chunks))}}
		if i == 1 {
			art.Name = "stream"
		}
		if err := t.Artifact(ctx, art, i > 1, i == chunks); err != nil {
			return err
		}
		if i%streamStatusEvery == 0 && i < chunks {
			msg := AgentMessage(a2a.NewTextPart(fmt.Sprintf("streamed %d/%d chunks", i, chunks)))
			if err := t.Status(ctx, a2a.TaskStateWorking, msg); err != nil {
				return err
			}
		}
	}
	return t.Status(ctx, a2a.TaskStateCompleted, AgentMessage(a2a.NewTextPart(fmt.Sprintf("streamed %d chunks", chunks))))
}
