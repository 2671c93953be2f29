package deadletter

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/latent-systems/latent-nats/tools/provision"
	"github.com/latent-systems/latent-nats/tools/validate"
	"github.com/latent-systems/latent-nats/trigger"
)

// Exit codes of the deadletter command (Main).
const (
	// ExitOK: listed, shown or replayed.
	ExitOK = 0
	// ExitFailed: an input violation, or a request that failed (the
	// message is gone, the broker refused, ...).
	ExitFailed = 1
	// ExitUsage: bad flags or arguments; no broker was contacted.
	ExitUsage = 2
)

// MaxPrintedReason bounds a TERM reason as list prints it, in bytes,
// before quoting: a reason is the terminating client's text.
const MaxPrintedReason = 64

// usage is the command's synopsis.
const usage = `usage: deadletter list   -config FILE -credentials FILE [-binding ID] [-after SEQ] [-limit N] [-timeout D]
       deadletter show   -config FILE -credentials FILE -binding ID -seq N [-raw] [-timeout D]
       deadletter replay -config FILE -credentials FILE -binding ID -seq N [-no-headers] [-timeout D]`

// Subcommands.
const (
	cmdList   = "list"
	cmdShow   = "show"
	cmdReplay = "replay"
)

// command is one parsed invocation.
type command struct {
	name        string
	configPath  string
	credsPath   string
	binding     string
	after       uint64
	limit       int
	seq         uint64
	raw         bool
	noHeaders   bool
	timeout     time.Duration
	stdout, err io.Writer
}

// Main runs the deadletter command with args (without the program name)
// and returns its exit code. ctx bounds the whole run (each dial and
// request is further bounded by -timeout).
//
// The configuration (any JSON spelling) and the credentials file (the
// format of package validate, naming for each tenant a secret allowed to
// read streams and to publish to its bindings' subjects: the account
// administrator's) are validated first; any violation is printed and
// nothing is contacted. Then:
//
//   - list prints, for the binding named (every binding when none is),
//     one line per give-up read from its tenant's dead-letter capture
//     stream (Client.List, at most -limit, after capture sequence
//     -after), and a line with the -after to continue when there may be
//     more;
//   - show prints the message of stream sequence -seq of the binding's
//     stream (Client.Message): where it was found, its subject, time,
//     the producer's header fields and its payload quoted as a Go string
//     (-raw writes the payload's bytes alone to stdout and the rest to
//     stderr);
//   - replay publishes that message again to its subject (Client.Replay)
//     and prints the new stream sequence.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	badUsage := func(why string) int {
		fmt.Fprintln(stderr, "deadletter:", why)
		fmt.Fprintln(stderr, usage)
		return ExitUsage
	}
	if len(args) == 0 {
		return badUsage("a subcommand is required: list, show or replay")
	}
	cmd := command{name: args[0], stdout: stdout, err: stderr}
	fs := flag.NewFlagSet("deadletter "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 done, 1 violations or a failed request, 2 usage")
	}
	fs.StringVar(&cmd.configPath, "config", "", "trigger configuration JSON (required)")
	fs.StringVar(&cmd.credsPath, "credentials", "", "credentials file naming each tenant's administrator secret (required)")
	fs.StringVar(&cmd.binding, "binding", "", "binding ID (required for show and replay)")
	fs.DurationVar(&cmd.timeout, "timeout", DefaultTimeout, "bound of each dial and request")
	switch cmd.name {
	case cmdList:
		fs.Uint64Var(&cmd.after, "after", 0, "list the give-ups recorded after this capture sequence")
		fs.IntVar(&cmd.limit, "limit", DefaultLimit, fmt.Sprintf("most records read per binding (1 to %d)", MaxLimit))
	case cmdShow, cmdReplay:
		fs.Uint64Var(&cmd.seq, "seq", 0, "stream sequence of the message (required)")
		if cmd.name == cmdShow {
			fs.BoolVar(&cmd.raw, "raw", false, "write the payload's bytes alone to stdout, the rest to stderr")
		} else {
			fs.BoolVar(&cmd.noHeaders, "no-headers", false, "replay the payload without the producer's header fields")
		}
	default:
		return badUsage("unknown subcommand " + strconv.Quote(cmd.name))
	}
	if err := fs.Parse(args[1:]); err != nil {
		return ExitUsage // the flag package printed why (or the help)
	}
	switch {
	case fs.NArg() > 0:
		return badUsage("no arguments are taken after the flags")
	case cmd.configPath == "" || cmd.credsPath == "":
		return badUsage("-config and -credentials are required")
	case cmd.name != cmdList && (cmd.binding == "" || cmd.seq == 0):
		return badUsage("-binding and a -seq of at least 1 are required")
	case cmd.name == cmdList && (cmd.limit < 1 || cmd.limit > MaxLimit):
		return badUsage(fmt.Sprintf("-limit must be 1 to %d", MaxLimit))
	case cmd.timeout < MinTimeout || cmd.timeout > MaxTimeout:
		return badUsage(fmt.Sprintf("-timeout must be %v to %v", MinTimeout, MaxTimeout))
	}

	res := validate.Check(validate.Input{ConfigPath: cmd.configPath, CredentialsPath: cmd.credsPath, AnySpelling: true})
	defer res.Wipe()
	if !res.OK() {
		for _, v := range res.Violations {
			fmt.Fprintln(stderr, v.String())
		}
		fmt.Fprintf(stderr, "deadletter: %d violation(s); nothing contacted\n", len(res.Violations))
		return ExitFailed
	}
	bindings := res.Config.Bindings
	if cmd.binding != "" {
		i := bindingIndex(res.Config, cmd.binding)
		if i < 0 {
			fmt.Fprintf(stderr, "deadletter: no binding %q in the configuration\n", cut(cmd.binding))
			return ExitFailed
		}
		bindings = bindings[i : i+1]
	}
	clients := map[string]*Client{}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	code := ExitOK
	for _, b := range bindings {
		c, ok := clients[b.Tenant]
		if !ok {
			var err error
			if c, err = dialTenant(ctx, res.Config, res.Credentials, b.Tenant, cmd.timeout); err != nil {
				fmt.Fprintf(stderr, "deadletter: tenant %s: %v\n", b.Tenant, err)
				return ExitFailed
			}
			clients[b.Tenant] = c
		}
		if err := cmd.run(ctx, c, b); err != nil {
			fmt.Fprintf(stderr, "deadletter: binding %s: %v\n", b.ID, err)
			code = ExitFailed
		}
	}
	return code
}

// bindingIndex returns the index of the binding with ID id, or -1.
func bindingIndex(cfg trigger.Config, id string) int {
	for i, b := range cfg.Bindings {
		if b.ID == id {
			return i
		}
	}
	return -1
}

// dialTenant connects to the tenant's exact destination with its
// credential (creds[i] belongs to cfg.Tenants[i]).
func dialTenant(ctx context.Context, cfg trigger.Config, creds []trigger.Credential, tenant string, timeout time.Duration) (*Client, error) {
	for i, t := range cfg.Tenants {
		if t.ID != tenant {
			continue
		}
		cc, err := provision.ConnConfig(t.Destination, creds[i].Secret)
		if err != nil {
			return nil, err
		}
		return Dial(ctx, cc, timeout)
	}
	return nil, fmt.Errorf("%w: tenant not in the configuration", ErrInvalidArgument)
}

// run runs the subcommand for one binding.
func (cmd *command) run(ctx context.Context, c *Client, b trigger.Binding) error {
	switch cmd.name {
	case cmdList:
		return cmd.list(ctx, c, b)
	case cmdShow:
		return cmd.show(ctx, c, b)
	default:
		return cmd.replay(ctx, c, b)
	}
}

// list prints one page of the binding's give-ups.
func (cmd *command) list(ctx context.Context, c *Client, b trigger.Binding) error {
	page, err := c.List(ctx, Query{Stream: b.Stream, Consumer: b.Consumer, After: cmd.after, Limit: cmd.limit})
	for _, e := range page.Entries {
		fmt.Fprintf(cmd.stdout, "%s seq=%d deliveries=%d kind=%q reason=%q time=%s capture_seq=%d\n",
			b.ID, e.StreamSeq, e.Deliveries, e.Kind.String(), cut(e.Reason), e.Time.Format(time.RFC3339Nano), e.CaptureSeq)
	}
	for _, s := range page.Skipped {
		fmt.Fprintf(cmd.stdout, "%s capture_seq=%d skipped: not a give-up advisory of the expected shape\n", b.ID, s)
	}
	if page.More {
		fmt.Fprintf(cmd.stdout, "%s more: -after %d\n", b.ID, page.Next)
	}
	return err
}

// show prints the message of the binding's stream at cmd.seq.
func (cmd *command) show(ctx context.Context, c *Client, b trigger.Binding) error {
	m, err := c.Message(ctx, b.Stream, cmd.seq)
	if err != nil {
		return err
	}
	fields, err := m.Fields()
	if err != nil {
		return err
	}
	meta := cmd.stdout
	if cmd.raw {
		meta = cmd.err
	}
	from := "its stream"
	if m.Holder == HolderCopy {
		from = fmt.Sprintf("the copy capture %s (seq %d)", provision.CopyStream, m.CopySeq)
	}
	fmt.Fprintf(meta, "%s: stream %s seq %d, held by %s\n", b.ID, m.Stream, m.Seq, from)
	fmt.Fprintf(meta, "subject %s\nstored %s\n", m.Subject, m.Time.Format(time.RFC3339Nano))
	for _, f := range fields {
		fmt.Fprintf(meta, "header %q: %q\n", f.Name, f.Value)
	}
	fmt.Fprintf(meta, "payload %d bytes\n", len(m.Data))
	if cmd.raw {
		_, err = cmd.stdout.Write(m.Data)
		return err
	}
	fmt.Fprintf(cmd.stdout, "%q\n", m.Data)
	return nil
}

// replay publishes the message of the binding's stream at cmd.seq again.
func (cmd *command) replay(ctx context.Context, c *Client, b trigger.Binding) error {
	m, err := c.Message(ctx, b.Stream, cmd.seq)
	if err != nil {
		return err
	}
	r, err := c.Replay(ctx, m, ReplayOptions{NoHeaders: cmd.noHeaders})
	if err != nil {
		return err
	}
	if r.Duplicate {
		fmt.Fprintf(cmd.stdout, "%s: stream %s seq %d was already replayed as %s seq %d within the duplicate window; nothing new stored\n",
			b.ID, m.Stream, m.Seq, r.Stream, r.Seq)
		return nil
	}
	fmt.Fprintf(cmd.stdout, "%s: replayed stream %s seq %d to %s as %s seq %d, a new message (delivery count 1)\n",
		b.ID, m.Stream, m.Seq, m.Subject, r.Stream, r.Seq)
	if r.Stream != b.Stream {
		return ErrStoredElsewhere
	}
	return nil
}

// cut returns s cut to MaxPrintedReason bytes.
func cut(s string) string {
	if len(s) > MaxPrintedReason {
		return s[:MaxPrintedReason]
	}
	return s
}
