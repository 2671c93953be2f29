// Package boundedfile owns the one way the module reads a file given by
// an operator: a regular file, at most a bound of bytes, read whole or not
// at all. Package trigger reads the credentials file and the secrets it
// names with it, and tools/validate the configuration file.
package boundedfile
