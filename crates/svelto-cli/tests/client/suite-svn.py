#!/usr/bin/env python3
"""`svn` for Subversion 1.14.2's command-line suite with every checkout done by Svelto.

Installed by suite.sh as `svn` in the suite's --bin directory: `svn checkout` (or `co`)
with only options `svelto checkout` has (-r N|{DATE}|HEAD, --depth (-N: files), -q,
--ignore-externals, --force, --username, --password, --non-interactive, --config-dir;
--no-auth-cache is dropped: Svelto writes no cache) and one svn:// or http(s):// URL (a
peg revision N or HEAD allowed) runs `svelto checkout`; anything else runs the stock svn
($STOCK_SVN, default /usr/bin/svn). Each decision is appended to $SVELTO_WRAP_LOG as one
line: 'svelto ARGS' or 'stock (REASON) ARGS', so the run tells how many checkouts
Svelto made. Svelto's error lines name their program (`svelto: E170001: ...`); the wrapper
gives them svn's name, the one difference the suite's expected errors cannot allow for.
"""
import os
import subprocess
import sys

STOCK = os.environ.get("STOCK_SVN", "/usr/bin/svn")
SVELTO = os.environ["SVELTO"]
LOG = os.environ.get("SVELTO_WRAP_LOG")

WITH_VALUE = {"-r": "-r", "--revision": "-r", "--depth": "--depth",
              "--username": "--username", "--password": "--password",
              "--config-dir": "--config-dir"}
FLAGS = {"-q": "-q", "--quiet": "-q", "--ignore-externals": "--ignore-externals",
         "--non-interactive": "--non-interactive", "--force": "--force"}
DROPPED_WITH_VALUE = set()
DROPPED = {"--no-auth-cache"}


def log(line):
    if LOG:
        with open(LOG, "a") as f:
            f.write(line + "\n")


def stock(reason, args):
    log(f"stock ({reason}) {' '.join(args)}")
    os.execv(STOCK, [STOCK] + args)


def plan(args):
    """The arguments of `svelto checkout`, or the reason the stock client runs."""
    out, positional = [], []
    i = 1
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if a.startswith("-r") and len(a) > 2 and not a.startswith("--"):
            # -rN: the value attached, as the suite writes it.
            name, eq, value = "-r", "=", a[2:]
        if not a.startswith("-") or a == "-":
            positional.append(a)
        elif name in WITH_VALUE or name in DROPPED_WITH_VALUE:
            if not eq:
                i += 1
                if i == len(args):
                    return None, f"{a} without a value"
                value = args[i]
            if name in WITH_VALUE:
                if WITH_VALUE[name] == "-r" and not (
                        value.isdigit() or value == "HEAD"
                        or (value.startswith("{") and value.endswith("}"))):
                    return None, f"revision {value}"
                out += [WITH_VALUE[name], value]
        elif a in ("-N", "--non-recursive"):
            # svn checkout's obsolete -N: --depth files.
            out += ["--depth", "files"]
        elif a in FLAGS:
            out.append(FLAGS[a])
        elif a in DROPPED:
            pass
        else:
            return None, f"option {a}"
        i += 1
    if not positional or len(positional) > 2:
        return None, f"{len(positional)} targets"
    url = positional[0]
    if not url.startswith(("svn://", "http://", "https://")):
        return None, "not svn:// or http(s)://"
    last = url.rstrip("/").rsplit("/", 1)[-1]
    if "@" in last:
        peg = last.rsplit("@", 1)[1]
        if not (peg.isdigit() or peg in ("", "HEAD")):
            return None, f"peg revision {peg}"
    return ["checkout"] + out + positional, None


def main():
    args = sys.argv[1:]
    if not args or args[0] not in ("checkout", "co"):
        os.execv(STOCK, [STOCK] + args)
    svelto_args, reason = plan(args)
    if svelto_args is None:
        stock(reason, args)
    log(f"svelto {' '.join(svelto_args)}")
    # Standard output passes through; in standard error the program's name at the start of
    # a line ("svelto: E170001: ...") is svn's, as the suite's expected errors write it.
    proc = subprocess.Popen([SVELTO] + svelto_args, stderr=subprocess.PIPE)
    for line in proc.stderr:
        if line.startswith(b"svelto: "):
            line = b"svn: " + line[len(b"svelto: "):]
        sys.stderr.buffer.write(line)
        sys.stderr.buffer.flush()
    sys.exit(proc.wait())


main()
