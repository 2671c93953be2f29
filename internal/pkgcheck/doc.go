// Package pkgcheck owns the checks a package's tests make of its own
// source: that doc.go opens with the package's sentence, and which imports
// reach outside the standard library. It reads the files of the current
// directory (a test's package directory) and refuses nothing else.
package pkgcheck
