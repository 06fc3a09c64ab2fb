//go:build unix

package hub

// disk_unix.go: free space on the disk holding a directory (statfs).

import (
	"os"
	"syscall"
)

// diskFree is the space available to this user on dir's disk; ok is false
// when it cannot be told.
func diskFree(dir string) (int64, bool) {
	for d := dir; d != ""; {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			return int64(st.Bavail) * int64(st.Bsize), true
		} else if !os.IsNotExist(err) {
			return 0, false
		}
		parent := parentDir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return 0, false
}
