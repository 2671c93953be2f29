package boundedfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular reports a path that is not a regular file (a directory, a
// device, a pipe): nothing is read from it. Read returns it in an
// *fs.PathError, as os reports a file it cannot read ("read <path>: not a
// regular file").
var ErrNotRegular = errors.New("not a regular file")

// Read reads the regular file at path if it holds at most max bytes. It
// returns the bytes and the file's mode; tooLarge when the file is longer
// than max (by its size or by what it yields), with no error; or the error
// that kept it from being read. On failure no bytes are returned, and
// what was read is cleared.
func Read(path string, max int64) (b []byte, mode fs.FileMode, tooLarge bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, false, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, 0, false, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, false, &fs.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	}
	if st.Size() > max {
		return nil, 0, true, nil
	}
	b, err = io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		clear(b)
		return nil, 0, false, err
	}
	if int64(len(b)) > max {
		clear(b)
		return nil, 0, true, nil
	}
	return b, st.Mode(), false, nil
}
