#!/usr/bin/env python3
"""bench/httpcommit.py: one-file commits over HTTP protocol v2, as the Subversion client
sends them, from N committers in one process; what a server takes, not how fast a
client program starts.

Each committer holds one keep-alive HTTP/1.1 connection with Basic auth and commits to
its own file, DIR/wW.txt, over and over. One commit is the three requests ra_serf (the
Subversion 1.14 client's HTTP library) sends for a one-file change to a server that
speaks HTTP protocol v2 (Subversion's notes/http-and-webdav/http-protocol-v2.txt):

  POST ME-RESOURCE        Content-Type: application/vnd.svn-skel, the skel
                          (create-txn-with-props (... svn:log LEN MSG)): 201 and
                          SVN-Txn-Name
  PUT  TXN-ROOT/DIR/wW.txt  Content-Type: application/vnd.svn-svndiff, the new full text
                          as an svndiff0 body (one window of new data),
                          X-SVN-Version-Name (the revision the committer last wrote the
                          file in), X-SVN-Base-Fulltext-MD5 (of that text) and
                          X-SVN-Result-Fulltext-MD5: 204 (201 for the first, an add)
  MERGE REPOS-PATH        X-SVN-Options: release-locks no-merge-response, a DAV:merge
                          body naming !svn/txn/TXN: 200 and the new revision in
                          D:version-name

(after one OPTIONS per connection, which gives the stubs). Captured from the 1.14 client
against these servers: `svn commit` sends X-SVN-Version-Name and the base checksum, `svnmucc
put` the result checksum, both svndiff2 when the server offers it; this sends all three
headers (each server checks both sums) and uncompressed svndiff0, which costs the server no
decompression. A failed commit is aborted
with DELETE of the transaction, as ra_serf does. Before the measured part, one commit
makes DIR (MKCOL) and each committer adds its file.

Modes: --duration S (every committer commits until S seconds have passed; a commit under
way then is finished and counted) or --commits N (each committer makes N commits).

Prints one JSON object: commits (landed in the measured part), failures, elapsed_s,
per_s (commits / elapsed_s), latency_median_s and latency_p90_s (wall per commit: POST
sent to MERGE answered), setup_commits, youngest_before/youngest_after, connections
(opened, keep-alive closes included), retries, client_cpu_s (this process's utime+stime
in the measured part), server_cpu_s (with --server-pid: utime+stime of that process, its
threads and its children, Apache's, from /proc, in the measured part), errors (counted by
message) and check: "ok", or what was wrong: every landed commit's revision is distinct
and new, youngest_after is youngest_before plus every commit made (nothing else may commit
meanwhile), and each committer's file reads back (GET) as the text it wrote last. Exit
status 1 when the check fails, 2 on bad usage or when the server cannot be used at all.

Python 3 standard library only.
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import re
import sys
import threading
import time
import urllib.parse

USER_AGENT = "SVN/1.14.2 (bench/httpcommit.py) raw"
DAV_HEADERS = [
    "http://subversion.tigris.org/xmlns/dav/svn/depth",
    "http://subversion.tigris.org/xmlns/dav/svn/mergeinfo",
    "http://subversion.tigris.org/xmlns/dav/svn/log-revprops",
]
OPTIONS_BODY = (
    b'<?xml version="1.0" encoding="utf-8"?><D:options xmlns:D="DAV:">'
    b"<D:activity-collection-set></D:activity-collection-set></D:options>"
)


class Failure(Exception):
    """A request did not get the answer a commit needs."""


# ----- the encodings ---------------------------------------------------------------


def skel_atom(data):
    """An atom as Subversion's skel writer puts it: bare when short, starting with a
    letter and free of blanks and brackets, else LENGTH SPACE BYTES."""
    implicit = (
        0 < len(data) < 100
        and chr(data[0]).isascii()
        and chr(data[0]).isalpha()
        and not any(b in b" \t\n\f\r()[]" for b in data)
    )
    return data if implicit else str(len(data)).encode() + b" " + data


def create_txn_body(log_message):
    """ra_serf's POST body when the server offers create-txn-with-props."""
    props = [
        (b"svn:txn-client-compat-version", b"1.14.2"),
        (b"svn:txn-user-agent", USER_AGENT.encode()),
        (b"svn:log", log_message.encode()),
    ]
    inner = b" ".join(skel_atom(k) + b" " + skel_atom(v) for k, v in props)
    return b"(create-txn-with-props (" + inner + b"))"


def svndiff_int(n):
    """A variable-length integer of svndiff: 7 bits a byte, most significant first, the
    high bit set on all but the last byte."""
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def svndiff0_fulltext(text, window=100 * 1024):
    """TEXT as svndiff version 0: windows of new data only (no source copies, so the
    server's result does not depend on the base; the base checksum still says which base
    the committer had)."""
    out = bytearray(b"SVN\x00")
    for start in range(0, len(text), window):
        chunk = text[start : start + window]
        n = len(chunk)
        # One instruction: copy from new data (opcode 2 in the top two bits), length in
        # the low six bits when it fits, else in an integer that follows.
        instr = bytes([0x80 | n]) if n < 64 else bytes([0x80]) + svndiff_int(n)
        out += svndiff_int(0)  # source view offset
        out += svndiff_int(0)  # source view length
        out += svndiff_int(n)  # target view length
        out += svndiff_int(len(instr))
        out += svndiff_int(n)  # new data length
        out += instr + chunk
    return bytes(out)


def merge_body(txn_path):
    return (
        '<?xml version="1.0" encoding="utf-8"?><D:merge xmlns:D="DAV:"><D:source>'
        "<D:href>" + txn_path + "</D:href></D:source><D:no-auto-merge/><D:no-checkout/>"
        "<D:prop><D:checked-in/><D:version-name/><D:resourcetype/><D:creationdate/>"
        "<D:creator-displayname/></D:prop></D:merge>"
    ).encode()


def file_text(writer, commit, size):
    """The text committer WRITER writes in its commit number COMMIT: lines naming both,
    at least SIZE bytes."""
    lines = []
    length = 0
    k = 0
    while length < max(size, 1):
        line = "line %d of committer %d, commit %d\n" % (k, writer, commit)
        lines.append(line)
        length += len(line)
        k += 1
    return "".join(lines).encode()


# ----- one connection --------------------------------------------------------------


class Session:
    """One keep-alive connection, logging in with Basic on every request (as ra_serf
    does once the server has asked)."""

    def __init__(self, args):
        self.args = args
        self.connections = 0
        self.retries = 0
        self.conn = None
        token = base64.b64encode(("%s:%s" % (args.user, args.password)).encode()).decode()
        self.auth = "Basic " + token

    def _connect(self):
        self.conn = http.client.HTTPConnection(self.args.host, self.args.port, timeout=120)
        self.conn.connect()
        self.connections += 1

    def request(self, method, path, body=b"", headers=None):
        """(status, headers, body) of one request. Retried once on a new connection when
        a reused one turns out closed before any answer (a keep-alive limit reached)."""
        for attempt in (0, 1):
            fresh = self.conn is None or self.conn.sock is None
            if fresh:
                self._connect()
            h = [
                ("Authorization", self.auth),
                ("User-Agent", USER_AGENT),
            ]
            h += [("DAV", d) for d in DAV_HEADERS]
            h += list((headers or {}).items())
            try:
                self.conn.putrequest(method, path, skip_accept_encoding=True)
                for k, v in h:
                    self.conn.putheader(k, v)
                self.conn.putheader("Content-Length", str(len(body)))
                self.conn.endheaders(body)
                resp = self.conn.getresponse()
                data = resp.read()
                return resp.status, resp.headers, data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.conn.close()
                self.conn = None
                if fresh or attempt:
                    raise
                self.retries += 1
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()


def discover(session, repo_path):
    """OPTIONS on the repository: the v2 stubs and the youngest revision."""
    status, headers, data = session.request(
        "OPTIONS", repo_path, OPTIONS_BODY, {"Content-Type": "text/xml"}
    )
    if status != 200:
        raise Failure("OPTIONS %s: %d %s" % (repo_path, status, data[:200]))
    stubs = {}
    for name in ("SVN-Me-Resource", "SVN-Txn-Stub", "SVN-Txn-Root-Stub", "SVN-Youngest-Rev"):
        value = headers.get(name)
        if value is None:
            raise Failure("OPTIONS %s: no %s header (no HTTP protocol v2)" % (repo_path, name))
        stubs[name] = value
    return stubs


# ----- one commit ------------------------------------------------------------------


def commit(session, stubs, repo_path, log_message, changes):
    """One commit: POST, then each (method, relpath, body, headers, wanted statuses) of
    CHANGES against the transaction root, then MERGE. Returns the new revision; aborts
    the transaction (DELETE) and raises Failure otherwise."""
    status, headers, data = session.request(
        "POST",
        stubs["SVN-Me-Resource"],
        create_txn_body(log_message),
        {"Content-Type": "application/vnd.svn-skel"},
    )
    txn = headers.get("SVN-Txn-Name")
    if status != 201 or not txn:
        raise Failure("POST: %d %s" % (status, data[:200].decode("utf-8", "replace")))
    txn_path = stubs["SVN-Txn-Stub"] + "/" + txn
    try:
        for method, relpath, body, extra, wanted in changes:
            target = stubs["SVN-Txn-Root-Stub"] + "/" + txn + "/" + urllib.parse.quote(relpath)
            status, _, data = session.request(method, target, body, extra)
            if status not in wanted:
                raise Failure(
                    "%s: %d %s" % (method, status, data[:300].decode("utf-8", "replace"))
                )
        status, _, data = session.request(
            "MERGE",
            repo_path,
            merge_body(txn_path),
            {"Content-Type": "text/xml", "X-SVN-Options": "release-locks no-merge-response"},
        )
        text = data.decode("utf-8", "replace")
        if status != 200:
            raise Failure("MERGE: %d %s" % (status, text[:300]))
        m = re.search(r"<D:version-name>(\d+)</D:version-name>", text)
        if not m:
            raise Failure("MERGE: 200 without a new revision: %s" % text[:300])
        return int(m.group(1))
    except Failure:
        try:
            session.request("DELETE", txn_path)
        except (OSError, http.client.HTTPException):
            pass
        raise


# ----- CPU from /proc --------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def server_ticks(pid):
    """utime+stime (and reaped children's) of PID and of its live children, as
    bench/servers.sh's `ticks` counts them."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                stat = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(entry) == pid or int(fields[1]) == pid:
            total += sum(int(x) for x in fields[11:15])
    return total


def own_cpu():
    t = os.times()
    return t.user + t.system


# ----- the committers --------------------------------------------------------------


class Committer(threading.Thread):
    def __init__(self, args, number, stubs, start, deadline):
        super().__init__(daemon=True)
        self.args = args
        self.number = number
        self.stubs = stubs
        self.start_event = start
        self.deadline = deadline
        self.session = Session(args)
        self.relpath = "%s/w%d.txt" % (args.dir, number)
        self.base_rev = None
        self.base_md5 = None
        self.last_text = None
        self.made = 0  # commits sent, to number the texts and log messages
        self.commits = 0
        self.failures = 0
        self.revisions = []
        self.latencies = []
        self.errors = {}
        self.setup_error = None
        self.ready = threading.Event()

    def one(self):
        self.made += 1
        text = file_text(self.number, self.made, self.args.size)
        headers = {
            "Content-Type": "application/vnd.svn-svndiff",
            "X-SVN-Result-Fulltext-MD5": hashlib.md5(text).hexdigest(),
        }
        if self.base_rev is not None:
            headers["X-SVN-Version-Name"] = str(self.base_rev)
        if self.base_md5 is not None:
            headers["X-SVN-Base-Fulltext-MD5"] = self.base_md5
        rev = commit(
            self.session,
            self.stubs,
            self.args.repo_path,
            "raw w%d c%d" % (self.number, self.made),
            [("PUT", self.relpath, svndiff0_fulltext(text), headers, (201, 204))],
        )
        self.base_rev = rev
        self.base_md5 = headers["X-SVN-Result-Fulltext-MD5"]
        self.last_text = text
        return rev

    def run(self):
        try:
            self.one()  # adds the file (or changes it, when a run before left it)
        except (Failure, OSError, http.client.HTTPException) as e:
            self.setup_error = str(e)
            self.ready.set()
            return
        self.ready.set()
        self.start_event.wait()
        while True:
            if self.deadline is not None:
                if time.monotonic() >= self.deadline[0]:
                    break
            elif self.commits + self.failures >= self.args.commits:
                break
            t0 = time.monotonic()
            try:
                rev = self.one()
            except (Failure, OSError, http.client.HTTPException) as e:
                self.failures += 1
                key = re.sub(r"\d+-[0-9a-z]+|r\d+|\d{2,}", "N", str(e))[:160]
                self.errors[key] = self.errors.get(key, 0) + 1
                if isinstance(e, (OSError, http.client.HTTPException)):
                    # The outcome is unknown: the next commit sends no base.
                    self.session.close()
                    self.session.conn = None
                    self.base_rev = self.base_md5 = None
                continue
            self.latencies.append(time.monotonic() - t0)
            self.commits += 1
            self.revisions.append(rev)


def quantile(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="the repository, http://HOST:PORT/PATH")
    p.add_argument("--user", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--writers", type=int, default=8, help="committers (default 8)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--duration", type=float, help="seconds of commits")
    mode.add_argument("--commits", type=int, help="commits per committer")
    p.add_argument("--dir", default="raw", help="the committers' directory (default raw)")
    p.add_argument("--size", type=int, default=100, help="bytes of each text (default 100)")
    p.add_argument("--server-pid", type=int, help="measure this process's CPU (and its children's)")
    args = p.parse_args()

    url = urllib.parse.urlsplit(args.url)
    if url.scheme != "http" or not url.hostname or args.writers < 1:
        p.error("--url must be http://HOST[:PORT]/PATH and --writers at least 1")
    args.host, args.port = url.hostname, url.port or 80
    args.repo_path = url.path.rstrip("/") or "/"

    main_session = Session(args)
    try:
        stubs = discover(main_session, args.repo_path)
        youngest_before = int(stubs["SVN-Youngest-Rev"])
        # The directory: one commit with MKCOL (405 when it is there already: then abort).
        setup = 0
        try:
            commit(main_session, stubs, args.repo_path, "raw: the committers' directory",
                   [("MKCOL", args.dir, b"", {}, (201,))])
            setup += 1
        except Failure as e:
            if "MKCOL: 405" not in str(e):
                raise
    except (Failure, OSError, http.client.HTTPException) as e:
        print("httpcommit.py: %s: %s" % (args.url, e), file=sys.stderr)
        return 2

    start = threading.Event()
    deadline = [0.0] if args.duration is not None else None
    committers = [Committer(args, w, stubs, start, deadline) for w in range(1, args.writers + 1)]
    for c in committers:
        c.start()
    for c in committers:
        c.ready.wait()
    bad = [c.setup_error for c in committers if c.setup_error]
    if bad:
        start.set()
        print("httpcommit.py: adding the committers' files failed: %s" % bad[0], file=sys.stderr)
        return 2
    setup += len(committers)

    s0 = server_ticks(args.server_pid) if args.server_pid else None
    c0 = own_cpu()
    t0 = time.monotonic()
    if deadline is not None:
        deadline[0] = t0 + args.duration
    start.set()
    for c in committers:
        c.join()
    elapsed = time.monotonic() - t0
    client_cpu = own_cpu() - c0
    server_cpu = (server_ticks(args.server_pid) - s0) / TICK if args.server_pid else None

    commits = sum(c.commits for c in committers)
    failures = sum(c.failures for c in committers)
    latencies = [x for c in committers for x in c.latencies]
    errors = {}
    for c in committers:
        for k, n in c.errors.items():
            errors[k] = errors.get(k, 0) + n

    # The check.
    problems = []
    try:
        youngest_after = int(discover(main_session, args.repo_path)["SVN-Youngest-Rev"])
    except (Failure, OSError, http.client.HTTPException) as e:
        youngest_after = None
        problems.append("OPTIONS after the run: %s" % e)
    revisions = sorted(r for c in committers for r in c.revisions)
    if len(set(revisions)) != len(revisions):
        problems.append("two commits were answered the same revision")
    if revisions and revisions[0] <= youngest_before:
        problems.append("a commit was answered r%d, not newer than r%d" % (revisions[0], youngest_before))
    if youngest_after is not None and youngest_after != youngest_before + setup + commits:
        problems.append(
            "youngest r%d after the run, expected r%d (r%d + %d setup + %d commits)"
            % (youngest_after, youngest_before + setup + commits, youngest_before, setup, commits)
        )
    for c in committers:
        path = args.repo_path + "/" + urllib.parse.quote(c.relpath)
        try:
            status, _, data = main_session.request("GET", path)
        except (OSError, http.client.HTTPException) as e:
            problems.append("GET %s: %s" % (path, e))
            continue
        if status != 200 or data != c.last_text:
            problems.append("GET %s: %d, not the last text committer %d wrote" % (path, status, c.number))
    main_session.close()
    for c in committers:
        c.session.close()

    result = {
        "writers": args.writers,
        "commits": commits,
        "failures": failures,
        "elapsed_s": round(elapsed, 3),
        "per_s": round(commits / elapsed, 2) if elapsed > 0 else None,
        "latency_median_s": round(quantile(latencies, 0.5), 5) if latencies else None,
        "latency_p90_s": round(quantile(latencies, 0.9), 5) if latencies else None,
        "setup_commits": setup,
        "youngest_before": youngest_before,
        "youngest_after": youngest_after,
        "connections": main_session.connections + sum(c.session.connections for c in committers),
        "retries": main_session.retries + sum(c.session.retries for c in committers),
        "client_cpu_s": round(client_cpu, 3),
        "server_cpu_s": round(server_cpu, 3) if server_cpu is not None else None,
        "errors": errors,
        "check": "ok" if not problems else "; ".join(problems),
    }
    print(json.dumps(result))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
