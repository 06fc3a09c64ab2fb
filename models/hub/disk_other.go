//go:build !unix

package hub

// disk_other.go: free space is not checked where statfs is missing.

func diskFree(string) (int64, bool) { return 0, false }
