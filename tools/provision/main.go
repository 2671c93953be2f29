package provision

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/latent-systems/latent-nats/tools/validate"
)

// Exit codes of the provision command (Main).
const (
	// ExitOK: every stream and consumer is as required (created or
	// asserted), and the permissions were written.
	ExitOK = 0
	// ExitFailed: an input violation, or a resource that is missing,
	// different, skipped or failed.
	ExitFailed = 1
	// ExitUsage: bad flags or arguments; no broker was contacted.
	ExitUsage = 2
)

// permissionsNone is the -permissions value that writes none.
const permissionsNone = "none"

// usage is the command's synopsis.
const usage = `usage: provision -config FILE -credentials FILE [-assert] [-permissions server|json|nsc|none]
                 [-retention workqueue|limits] [-max-msgs N] [-max-bytes N] [-replicas N] [-timeout D]
                 [-deadletters=false] [-deadletter-max-age D] [-deadletter-max-bytes N]
                 [-copies] [-copy-max-age D] [-copy-max-bytes N]
       provision -config FILE -permissions-only [-permissions server|json|nsc]`

// Main runs the provision command with args (without the program name) and
// returns its exit code. ctx bounds the whole run (each dial and request is
// further bounded by -timeout).
//
// The configuration (any JSON spelling) and the credentials file (the format
// of package validate: each tenant's provider, exact destination and the
// file of a secret allowed to manage streams and consumers) are validated
// first; any violation is printed and nothing is contacted. Then Run
// provisions every tenant. The report goes to stderr, one line per stream
// and consumer with every mismatch below it, and a summary; the tenants'
// permissions go to stdout in the chosen format, each tenant's subscribe
// permission its private inbox trigger.InboxPrefix(tenant) + ".>" (the
// prefix is derived, not chosen). -permissions-only derives and writes the
// permissions from the configuration alone.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("provision", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 all created or asserted, 1 violations, mismatches or failures, 2 usage")
	}
	defaults := DefaultOptions()
	configPath := fs.String("config", "", "trigger configuration JSON (required)")
	credsPath := fs.String("credentials", "", "credentials file naming each tenant's management secret (required unless -permissions-only)")
	assert := fs.Bool("assert", false, "create nothing: only check that every stream and consumer exists as required")
	permsFormat := fs.String("permissions", FormatServer.String(), "format of the runtime's permissions on stdout: server, json (with the scope of a signing key), nsc (scoped signing key commands) or none")
	permsOnly := fs.Bool("permissions-only", false, "only derive and write the permissions; no credentials, no broker")
	retention := fs.String("retention", defaults.Stream.Retention.String(), "retention of the streams created: workqueue or limits")
	maxMsgs := fs.Int64("max-msgs", defaults.Stream.MaxMsgs, "max_msgs of the streams created (-1: none of their own)")
	maxBytes := fs.Int64("max-bytes", defaults.Stream.MaxBytes, "max_bytes of the streams created (-1: none of their own)")
	replicas := fs.Int("replicas", defaults.Stream.Replicas, fmt.Sprintf("replica count of the streams and consumers created, and required of existing ones (1 to %d)", MaxReplicas))
	deadLetters := fs.Bool("deadletters", defaults.Capture.DeadLetters, "create (or assert) the capture stream "+DeadLetterStream+" of the broker's give-up advisories in each tenant's account")
	deadLetterAge := fs.Duration("deadletter-max-age", defaults.Capture.DeadLetterMaxAge, "max_age of "+DeadLetterStream+" (at least "+MinCaptureMaxAge.String()+")")
	deadLetterBytes := fs.Int64("deadletter-max-bytes", defaults.Capture.DeadLetterMaxBytes, "max_bytes of "+DeadLetterStream)
	copies := fs.Bool("copies", defaults.Capture.Copies, "republish every message of the streams created to "+CopyStream+", which keeps a copy of each (every message is stored twice)")
	copyAge := fs.Duration("copy-max-age", defaults.Capture.CopyMaxAge, "max_age of "+CopyStream+" (at least "+MinCaptureMaxAge.String()+")")
	copyBytes := fs.Int64("copy-max-bytes", defaults.Capture.CopyMaxBytes, "max_bytes of "+CopyStream)
	timeout := fs.Duration("timeout", defaults.Timeout, fmt.Sprintf("bound of each dial and request (a create of a replicated stream or consumer waits at least %v: a new Raft group may take an election timeout to elect its leader)", ReplicatedCreateTimeout))
	if err := fs.Parse(args); err != nil {
		return ExitUsage // the flag package printed why (or the help)
	}
	badUsage := func(why string) int {
		fmt.Fprintln(stderr, "provision:", why)
		fs.Usage()
		return ExitUsage
	}
	if fs.NArg() > 0 {
		return badUsage("no arguments are taken")
	}
	if *configPath == "" {
		return badUsage("-config is required")
	}
	if !*permsOnly && *credsPath == "" {
		return badUsage("-credentials is required")
	}
	format := Format(0)
	if *permsFormat != permissionsNone {
		f, err := ParseFormat(*permsFormat)
		if err != nil {
			return badUsage(err.Error())
		}
		format = f
	}
	if *permsOnly && format == 0 {
		return badUsage("-permissions-only needs a format")
	}
	opts := defaults
	opts.Timeout = *timeout
	opts.Stream.MaxMsgs, opts.Stream.MaxBytes = *maxMsgs, *maxBytes
	if *replicas == 0 {
		return badUsage("-replicas must be 1 to " + strconv.Itoa(MaxReplicas))
	}
	opts.Stream.Replicas = *replicas
	opts.Capture = CaptureOptions{
		DeadLetters: *deadLetters, DeadLetterMaxAge: *deadLetterAge, DeadLetterMaxBytes: *deadLetterBytes,
		Copies: *copies, CopyMaxAge: *copyAge, CopyMaxBytes: *copyBytes,
	}
	if *assert {
		opts.Mode = ModeAssert
	}
	r, err := ParseRetention(*retention)
	if err != nil {
		return badUsage(err.Error())
	}
	opts.Stream.Retention = r
	if err := opts.validate(); err != nil {
		return badUsage(err.Error())
	}

	in := validate.Input{ConfigPath: *configPath, AnySpelling: true}
	if !*permsOnly {
		in.CredentialsPath = *credsPath
	}
	res := validate.Check(in)
	defer res.Wipe()
	if !res.OK() {
		for _, v := range res.Violations {
			fmt.Fprintln(stderr, v.String())
		}
		fmt.Fprintf(stderr, "provision: %d violation(s); nothing contacted\n", len(res.Violations))
		return ExitFailed
	}
	perms, err := DerivePermissions(res.Config)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitFailed
	}

	code := ExitOK
	if !*permsOnly {
		rep, err := Run(ctx, res.Config, res.Credentials, opts)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return ExitFailed
		}
		if _, err := rep.WriteTo(stderr); err != nil {
			return ExitFailed
		}
		if !rep.OK() {
			code = ExitFailed
		}
	}
	if format != 0 {
		if err := WritePermissions(stdout, format, perms); err != nil {
			fmt.Fprintln(stderr, err)
			return ExitFailed
		}
	}
	return code
}
