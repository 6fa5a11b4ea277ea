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
