#!/usr/bin/env python3
"""testcpu.py: CPU-seconds of each top-level test of one package, Chromium's included.

    go test -c -o /tmp/web.test ./web
    python3 scripts/bench/testcpu.py /tmp/web.test web [TestA TestB ...]

Runs each named test (default: every test `-test.list` prints) alone, in the package's directory,
as a child of this process made a subreaper (PR_SET_CHILD_SUBREAPER), so Chromium's renderer and
zygote processes, which outlive their parent, are still waited for and their CPU time counted in
RUSAGE_CHILDREN. Prints one line a test, "CPU-s wall-s exit test", largest first. CPU time is what
the README test command's wall time on 2 cores is made of, and it moves less with other load than
wall time does.
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def run_one(binary, pkgdir, test):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    pid = os.fork()
    if pid == 0:
        os.chdir(pkgdir)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(binary, [binary, "-test.run", "^" + test + "$", "-test.count=1"])
    status = None
    while True:  # the test binary, then every orphan it left to us
        try:
            p, st = os.wait()
        except ChildProcessError:
            break
        if p == pid:
            status = os.waitstatus_to_exitcode(st)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, time.time() - t0, status


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, pkgdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    tests = sys.argv[3:]
    if not tests:
        out = subprocess.run([binary, "-test.list", "."], cwd=pkgdir, capture_output=True, text=True).stdout
        tests = [l for l in out.split() if l.startswith("Test")]
    rows = []
    for t in tests:
        cpu, wall, code = run_one(binary, pkgdir, t)
        rows.append((cpu, wall, code, t))
        print(f"{cpu:7.1f} {wall:7.1f} {code} {t}", file=sys.stderr, flush=True)
    rows.sort(reverse=True)
    for cpu, wall, code, t in rows:
        print(f"{cpu:7.1f} {wall:7.1f} {code} {t}")
    print(f"{sum(r[0] for r in rows):7.1f} CPU-s in all, {len(rows)} tests")


if __name__ == "__main__":
    main()
