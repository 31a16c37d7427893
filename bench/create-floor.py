#!/usr/bin/env python3
"""bench/create-floor.py SRC DST: the kernel's floor for writing a tree's files. Reads every
regular file under SRC (an export, say, in /dev/shm) into memory, then creates the same
directories and files under DST (which must not exist) with one open, write and close each,
and prints the wall, user and system time of that part. No checksums, modes or times: what
any client writing those files must at least pay the kernel."""
import os, sys, resource, time
src, dst = sys.argv[1], sys.argv[2]
files = []
for root, dirs, names in os.walk(src):
    rel = os.path.relpath(root, src)
    for n in names:
        p = os.path.join(root, n)
        if os.path.islink(p): continue
        with open(p, 'rb') as f: files.append((rel, n, f.read()))
dirs = sorted({rel for rel, _, _ in files})
r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.time()
os.mkdir(dst)
for d in dirs:
    if d != '.': os.makedirs(os.path.join(dst, d), exist_ok=True)
for rel, n, data in files:
    fd = os.open(os.path.join(dst, rel, n), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, data)
    os.close(fd)
r1 = resource.getrusage(resource.RUSAGE_SELF); t1 = time.time()
print(f"{len(files)} files: wall {t1-t0:.2f} s, user {r1.ru_utime-r0.ru_utime:.2f} s, sys {r1.ru_stime-r0.ru_stime:.2f} s")
