package validate

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Exit codes of the validate command (Main).
const (
	// ExitOK: no violation.
	ExitOK = 0
	// ExitViolations: at least one violation (or the canonical encoding
	// could not be written).
	ExitViolations = 1
	// ExitUsage: bad flags or arguments; nothing was checked.
	ExitUsage = 2
)

// canonicalFileMode is the mode of the file -write-canonical creates: the
// configuration holds no secret.
const canonicalFileMode = 0o644

// Main runs the validate command with args (without the program name) and
// returns its exit code:
//
//	validate -config FILE [-credentials FILE] [-any-spelling] [-write-canonical FILE]
//
// Every violation is printed to stdout, one line each, as
// "<config|credentials>: <JSON path>: <rule>: <detail>" for the trigger
// package's rules (the value given, the bound or allowed values, what to
// do: trigger.Detail) and "<config|credentials>: <JSON path>: <rule>
// (<explanation>)" for the files' own rules, followed by one summary line.
// Usage errors go to stderr.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: validate -config FILE [-credentials FILE] [-any-spelling] [-write-canonical FILE]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 valid, 1 violations, 2 usage")
	}
	configPath := fs.String("config", "", "trigger configuration JSON (required)")
	credsPath := fs.String("credentials", "", "credentials file to load and match against the configuration (optional)")
	anySpelling := fs.Bool("any-spelling", false, "accept the configuration in any JSON spelling, not only the canonical encoding")
	writeCanonical := fs.String("write-canonical", "", "when valid, write the canonical encoding to this file (implies -any-spelling)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage // the flag package printed why (or the help)
	}
	if fs.NArg() > 0 || *configPath == "" {
		fmt.Fprintln(stderr, "validate: -config is required and no arguments are taken")
		fs.Usage()
		return ExitUsage
	}
	res := Check(Input{
		ConfigPath:      *configPath,
		AnySpelling:     *anySpelling || *writeCanonical != "",
		CredentialsPath: *credsPath,
	})
	defer res.Wipe()
	for _, v := range res.Violations {
		fmt.Fprintln(stdout, v.String())
	}
	if !res.OK() {
		fmt.Fprintln(stdout, "validate: "+strconv.Itoa(len(res.Violations))+" violation(s)")
		return ExitViolations
	}
	if *writeCanonical != "" {
		if err := os.WriteFile(*writeCanonical, res.Canonical, canonicalFileMode); err != nil {
			fmt.Fprintln(stdout, "validate: writing the canonical encoding:", err)
			return ExitViolations
		}
	}
	summary := fmt.Sprintf("validate: ok: %d tenant(s), %d binding(s)", len(res.Config.Tenants), len(res.Config.Bindings))
	if *credsPath != "" {
		summary += fmt.Sprintf(", %d credential(s) matched", len(res.Credentials))
	}
	fmt.Fprintln(stdout, summary)
	return ExitOK
}
