// Package pkgcheck owns the checks the module's tests make of its own
// source: the package docs of the whole module (ModuleDocs against the
// rule of each kind of package, DocViolations) and its layering: the
// imports of every package (ModuleImports) against the layers it may use
// (LayerViolations). It reads source files only, never builds or runs
// anything, and refuses nothing else.
//
// TestModuleDocs in this package is the one test of the package docs, and
// TestModuleLayers the one table of the layers: every package of the
// module with the imports of its non-test files it may make outside the
// standard library, and why. Test-only imports are left out of it.
// TestBoundsAgree is the one list of the relations that must hold between
// bounds of different packages and that no import derives.
package pkgcheck
