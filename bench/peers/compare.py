"""Runs every driver on every workload against one Redis server and prints the
comparison table (bench/peers/README.md says what each figure means).

    /usr/bin/python3 compare.py --port PORT --rdl-peer PATH [--quick]
                                [--only LIB[,LIB...]] [--out FILE]

bench/peers/run.sh starts the server, builds rdl-peer and calls this. Each
driver is a program speaking the line protocol described at the top of
rdl_peer.c; this script starts it, waits for "ready", reads the server's
INFO, says "go", waits for "result", reads INFO again and says "bye". For H
it starts eight processes of one driver, forwards each acquisition ("A") to
the seven others ("N"), so that a process that released waits for someone
else to acquire before trying again, says "stop" after the duration, and puts
the processes' records on one time line (CLOCK_MONOTONIC, shared by all).

Only the standard library: it runs with any python3.
"""
import argparse
import datetime
import json
import math
import os
import platform
import random
import selectors
import socket
import string
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

ACQUIRERS = 50  # T1 and T50
H_PROCESSES = 8
HOLD_MS = 1
DURATIONS = {"full": {"U": 10, "T": 10, "H": 20}, "quick": {"U": 1, "T": 1, "H": 2}}
READY_TIMEOUT = 120  # s: connecting and warming up
GRACE = 60  # s past a workload's duration before a driver counts as hung

LIBRARIES = ["node-redlock", "redis-semaphore", "redis-py", "rdl"]
PEERS = LIBRARIES[:3]


def log(msg):
    sys.stderr.write(f"[peers] {msg}\n")
    sys.stderr.flush()


# ---- the server's counters ---------------------------------------------------


class Info:
    """A connection of its own that reads INFO (sections server, cpu, stats)."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the INFO connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        self.sock.sendall(b"INFO\r\n")
        head = self._line()
        if not head.startswith(b"$"):
            raise ConnectionError(f"unexpected INFO reply {head[:80]!r}")
        size = int(head[1:])
        while len(self.buf) < size + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the INFO connection")
            self.buf += chunk
        body, self.buf = self.buf[:size], self.buf[size + 2:]
        fields = {}
        for line in body.decode().splitlines():
            name, sep, value = line.partition(":")
            if sep:
                fields[name] = value
        return fields

    def snapshot(self):
        """(server CPU in microseconds, commands processed so far)."""
        f = self.read()
        cpu = (float(f["used_cpu_user"]) + float(f["used_cpu_sys"])) * 1e6
        return cpu, int(f["total_commands_processed"])

    def close(self):
        self.sock.close()


def server_share(before, after, units):
    """Server CPU (us) and commands per unit between two snapshots; the
    delta counts the first INFO itself, not the second."""
    if not units:
        return None, None
    return (after[0] - before[0]) / units, (after[1] - before[1] - 1) / units


# ---- one driver process ------------------------------------------------------


class DriverError(Exception):
    pass


class Driver:
    def __init__(self, argv):
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     bufsize=0, cwd=HERE)
        self.fd = self.proc.stdout.fileno()
        self.buf = b""
        self.lines = []

    def send(self, line):
        try:
            self.proc.stdin.write((line + "\n").encode())
        except (BrokenPipeError, ValueError):
            pass  # it is gone; its exit status says why

    def read_some(self):
        """Reads what is there; False at EOF."""
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            return False
        self.buf += chunk
        *done, self.buf = self.buf.split(b"\n")
        self.lines.extend(line.decode() for line in done)
        return True

    def wait_word(self, word, timeout):
        """The argument of the next line starting with `word` (other lines
        are dropped)."""
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.fd, selectors.EVENT_READ)
        try:
            while True:
                while self.lines:
                    head, _, rest = self.lines.pop(0).partition(" ")
                    if head == word:
                        return rest
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DriverError(f"no '{word}' within {timeout:.0f} s")
                if sel.select(left) and not self.read_some():
                    raise DriverError(f"exited (status {self.proc.wait()}) before '{word}'")
        finally:
            sel.close()

    def finish(self):
        """Says bye and waits for the exit; kills it if it hangs."""
        self.send("bye")
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            raise DriverError("did not exit after 'bye'")
        if rc != 0:
            raise DriverError(f"exited with status {rc}")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# ---- workloads ---------------------------------------------------------------


def run_cycles(argv, info, seconds):
    """U, T1 and T50: one process, cycles over `seconds`."""
    d = Driver(argv)
    try:
        meta = json.loads(d.wait_word("ready", READY_TIMEOUT))
        before = info.snapshot()
        d.send("go")
        res = json.loads(d.wait_word("result", seconds + GRACE))
        after = info.snapshot()
        d.finish()
    finally:
        d.kill()
    us, cmds = server_share(before, after, res["cycles"])
    return meta, {
        "cycles": res["cycles"], "seconds": round(res["seconds"], 3),
        "cycles_per_s": res["cycles"] / res["seconds"],
        "server_us_per_cycle": us, "server_cmds_per_cycle": cmds,
        "failures": res.get("failures", 0),
    }


def percentile(sorted_values, p):
    """Nearest rank."""
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(p * len(sorted_values)) - 1)]


def run_handoff(argv, info, seconds):
    """H: H_PROCESSES processes of one driver hand one lock to each other."""
    drivers = [Driver(argv) for _ in range(H_PROCESSES)]
    sel = selectors.DefaultSelector()
    try:
        metas = [json.loads(d.wait_word("ready", READY_TIMEOUT)) for d in drivers]
        by_fd = {d.fd: i for i, d in enumerate(drivers)}
        for d in drivers:
            sel.register(d.fd, selectors.EVENT_READ)
        results = [None] * H_PROCESSES
        before = info.snapshot()
        for d in drivers:
            d.send("go")
        t_go = time.monotonic()
        t_stop = t_go + seconds
        stopped = False
        while any(r is None for r in results):
            now = time.monotonic()
            if not stopped and now >= t_stop:
                stopped = True
                for d in drivers:
                    d.send("stop")
            if now > t_stop + GRACE:
                raise DriverError(f"H: no result within {GRACE} s of 'stop'")
            wait = (t_stop - now) if not stopped else (t_stop + GRACE - now)
            for key, _ in sel.select(max(0.0, wait)):
                i = by_fd[key.fd]
                if not drivers[i].read_some():
                    raise DriverError(f"H: process {i} exited (status "
                                      f"{drivers[i].proc.wait()}) before its result")
                for line in drivers[i].lines:
                    head, _, rest = line.partition(" ")
                    if head == "A":
                        for j, other in enumerate(drivers):
                            if j != i:
                                other.send("N " + rest)
                    elif head == "result":
                        results[i] = json.loads(rest)
                drivers[i].lines.clear()
        after = info.snapshot()
        for d in drivers:
            d.finish()
    finally:
        sel.close()
        for d in drivers:
            d.kill()

    records = sorted((acq, rel, done, i) for i, r in enumerate(results)
                     for acq, rel, done in r["records"])
    n = len(records)
    gaps, violations, self_turns = [], 0, 0
    for prev, cur in zip(records, records[1:]):
        if cur[0] < prev[1]:
            violations += 1  # held before the previous holder released
        if cur[3] == prev[3]:
            self_turns += 1
        gaps.append((cur[0] - prev[1]) / 1e6)
    gaps.sort()
    turns = [len(r["records"]) for r in results]
    requests = sum(r["requests"] for r in results)
    us, cmds = server_share(before, after, n)
    return metas[0], {
        "processes": H_PROCESSES, "hold_ms": HOLD_MS, "seconds": seconds,
        "acquisitions": n, "acquisitions_per_s": n / seconds,
        "gap_p50_ms": percentile(gaps, 0.5), "gap_p99_ms": percentile(gaps, 0.99),
        "requests_per_acq": requests / n if n else None,
        "server_us_per_acq": us, "server_cmds_per_acq": cmds,
        "turns_min": min(turns), "turns_max": max(turns), "self_reacquisitions": self_turns,
        "failures": sum(r.get("failures", 0) for r in results),
        "exclusion_violations": violations,
    }


# ---- the plan ----------------------------------------------------------------


def driver_argv(library, workload, args, key, seconds):
    tail = [workload, args.host, str(args.port), key, str(seconds), str(HOLD_MS), str(ACQUIRERS)]
    if library == "node-redlock":
        return ["node", "node_peer.js", "redlock"] + tail
    if library == "redis-semaphore":
        return ["node", "node_peer.js", "redis-semaphore"] + tail
    if library == "redis-py":
        return [args.python, "redis_py_peer.py"] + tail
    return [args.rdl_peer] + tail


# (figure, driver workload, form shown in the table or None). rdl's first
# form of T1 and T50 is the one compared; its second is shown beside it.
def variants(library, figure):
    if library == "rdl" and figure in ("T1", "T50"):
        return [(figure, "async"), (figure + "-threads", "threads")]
    return [(figure, None)]


def run_all(args, out):
    durations = DURATIONS["quick" if args.quick else "full"]
    run_id = "".join(random.choice(string.ascii_lowercase) for _ in range(6))
    info = Info(args.host, args.port)
    results = {}  # (library, figure) -> [(form, meta, figures)]
    failed = []
    try:
        for figure in ("U", "T1", "T50", "H"):
            seconds = durations[figure[0]]
            for library in args.only:
                for workload, form in variants(library, figure):
                    label = f"{figure} {library}" + (f" ({form})" if form else "")
                    log(f"{label}: {seconds} s")
                    key = f"peers:{run_id}:{library}:{workload}"
                    argv = driver_argv(library, workload, args, key, seconds)
                    try:
                        if figure == "H":
                            meta, figs = run_handoff(argv, info, seconds)
                        else:
                            meta, figs = run_cycles(argv, info, seconds)
                    except (DriverError, ValueError, KeyError) as e:
                        log(f"{label}: FAILED: {e}")
                        failed.append(label)
                        continue
                    row = {"library": library, "figure": figure, "workload": workload,
                           "form": form or meta.get("form"), "meta": meta, **figs}
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    results.setdefault((library, figure), []).append((form, meta, figs))
                    if figs.get("exclusion_violations"):
                        log(f"{label}: {figs['exclusion_violations']} EXCLUSION VIOLATIONS")
                        failed.append(label + " (exclusion)")
    finally:
        info.close()
    return results, failed


# ---- the table ---------------------------------------------------------------

# (label, figure, field, higher is better, format)
ROWS = [
    ("U: 1 client, cycles/s", "U", "cycles_per_s", True, "{:,.0f}"),
    ("U: server µs/cycle", "U", "server_us_per_cycle", False, "{:.1f}"),
    ("U: server commands/cycle", "U", "server_cmds_per_cycle", False, "{:.2f}"),
    (f"T1: {ACQUIRERS} acquirers, 1 connection, cycles/s", "T1", "cycles_per_s", True, "{:,.0f}"),
    ("T1: server µs/cycle", "T1", "server_us_per_cycle", False, "{:.1f}"),
    ("T1: server commands/cycle", "T1", "server_cmds_per_cycle", False, "{:.2f}"),
    (f"T50: {ACQUIRERS} acquirers, {ACQUIRERS} connections, cycles/s", "T50", "cycles_per_s",
     True, "{:,.0f}"),
    ("T50: server µs/cycle", "T50", "server_us_per_cycle", False, "{:.1f}"),
    ("T50: server commands/cycle", "T50", "server_cmds_per_cycle", False, "{:.2f}"),
    (f"H: hand-off gap p50, ms ({H_PROCESSES} processes)", "H", "gap_p50_ms", False, "{:.3f}"),
    ("H: requests/acquisition", "H", "requests_per_acq", False, "{:.2f}"),
    ("H: server µs/acquisition", "H", "server_us_per_acq", False, "{:.1f}"),
    ("H: server commands/acquisition", "H", "server_cmds_per_acq", False, "{:.2f}"),
]


def value(results, library, figure, field):
    """The compared value (the first form) and the cell's text."""
    runs = results.get((library, figure))
    if not runs:
        return None, "-"
    texts = []
    for form, _, figs in runs:
        v = figs.get(field)
        t = "-" if v is None else ROW_FORMAT[field].format(v)
        texts.append(f"{t} {form}" if form and len(runs) > 1 else t)
    first = runs[0][2].get(field)
    return first, texts[0] + (f" ({', '.join(texts[1:])})" if len(texts) > 1 else "")


ROW_FORMAT = {field: fmt for _, _, field, _, fmt in ROWS}


def table(results, libraries):
    cols = [lib for lib in LIBRARIES if lib in libraries]
    lines = ["| figure | " + " | ".join(cols) + " | best peer | rdl / best peer |",
             "|---|" + "---:|" * len(cols) + "---|---:|"]
    for label, figure, field, higher, fmt in ROWS:
        cells, peer_values = [], []
        for lib in cols:
            v, text = value(results, lib, figure, field)
            cells.append(text)
            if lib in PEERS and v is not None:
                peer_values.append((v, lib))
        best = ratio = "-"
        rdl_value = value(results, "rdl", figure, field)[0]
        if peer_values:
            bv = (max if higher else min)(v for v, _ in peer_values)
            tied = [lib for v, lib in peer_values if fmt.format(v) == fmt.format(bv)]
            best = f"{fmt.format(bv)} ({', '.join(tied)})"
            if rdl_value is not None and bv and rdl_value:
                r = rdl_value / bv if higher else bv / rdl_value
                ratio = f"{r:.2f} x"
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {best} | {ratio} |")
    return "\n".join(lines)


# ---- the run's description -----------------------------------------------------


def git_head():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def describe(args, results):
    info = Info(args.host, args.port)
    try:
        redis_version = info.read()["redis_version"]
    finally:
        info.close()
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_head(), "redis": redis_version, "cpu": cpu_model(),
        "cores": os.cpu_count(), "quick": args.quick, "rdl_build_type": args.build_type,
    }
    header = (f"{env['date']}, rdl at `{env['commit']}` (build type {env['rdl_build_type']}), "
              f"redis-server {env['redis']}, {env['cpu']}, {env['cores']} cores"
              + (" (--quick: durations too short to mean much)" if args.quick else ""))
    seen, versions = set(), []
    for lib in LIBRARIES:
        for (l, _), runs in results.items():
            if l == lib and lib not in seen:
                seen.add(lib)
                m = runs[0][1]
                extra = f"; {m['settings']}" if m.get("settings") else ""
                versions.append(f"{lib} {m['version']} ({m['client']}{extra})")
    return env, header, versions


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rdl-peer", required=True, help="the rdl-peer binary")
    p.add_argument("--python", default="/usr/bin/python3", help="the python with redis-py")
    p.add_argument("--build-type", default="unknown", help="librdl's CMAKE_BUILD_TYPE")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default=",".join(LIBRARIES))
    p.add_argument("--out", default=os.path.join(HERE, "results", "last.jsonl"))
    args = p.parse_args()
    wanted = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = [x for x in wanted if x not in LIBRARIES]
    if unknown or not wanted:
        p.error(f"unknown library {', '.join(unknown)} (known: {', '.join(LIBRARIES)})")
    args.only = [lib for lib in LIBRARIES if lib in wanted]  # always in the table's order
    args.rdl_peer = os.path.abspath(args.rdl_peer)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    started = time.monotonic()
    with open(args.out, "w") as out:
        results, failed = run_all(args, out)
        env, header, versions = describe(args, results)
        out.write(json.dumps({"meta": "run", **env, "failed": failed,
                              "seconds": round(time.monotonic() - started, 1)}) + "\n")
    print()
    print(header)
    print()
    print(table(results, args.only))
    print()
    for v in versions:
        print(f"- {v}")
    print()
    print(f"raw results: {args.out}; whole run {time.monotonic() - started:.0f} s")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
