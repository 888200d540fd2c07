"""The redis-py driver of the side-by-side comparison (bench/peers/README.md).

redis-py's Lock (redis.Redis.lock()) from Debian's python3-redis, with its
defaults: sleep 0.1 s between tries, no blocking timeout. compare.py runs

    /usr/bin/python3 redis_py_peer.py WORKLOAD HOST PORT KEY SECONDS HOLD_MS ACQUIRERS

with WORKLOAD U, T1, T50 or H, and speaks the line protocol described at the
top of rdl_peer.c (ready / go / result / bye; for H also A, N and stop).

  U    one client, one key, acquire + release in a loop.
  T1   ACQUIRERS threads on as many keys sharing one connection (a
       BlockingConnectionPool of one: each command waits for the connection).
  T50  the same threads, each with a redis.Redis (and so a connection) of
       its own.
  H    one client; acquire, hold HOLD_MS, release; after a release, wait
       until another process has acquired before trying again.
"""
import itertools
import json
import platform
import sys
import threading
import time

import redis

LEASE_S = 10  # every driver holds with a 10 s lease
WARMUP_U = 200
WARMUP_T = 20


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def expect(word):
    """Reads protocol lines until one is `word`; False on EOF."""
    for line in sys.stdin:
        if line.strip() == word:
            return True
    return False


def ready(form):
    say("ready " + json.dumps({
        "library": "redis-py", "version": redis.__version__, "form": form,
        "client": f"redis-py {redis.__version__}, python {platform.python_version()}",
        "settings": "defaults: sleep 0.1 s, blocking_timeout None", "lease_ms": LEASE_S * 1000}))


def cycles(r, name, until):
    n = 0
    while True:
        lock = r.lock(name, timeout=LEASE_S)
        lock.acquire()
        lock.release()
        n += 1
        if not until(n):
            return n


def run_u(host, port, key, seconds):
    r = redis.Redis(host=host, port=port)
    cycles(r, key, lambda n: n < WARMUP_U)
    ready("sequential")
    if not expect("go"):
        sys.exit(1)
    start = time.monotonic_ns()
    deadline = start + int(seconds * 1e9)
    n = cycles(r, key, lambda _: time.monotonic_ns() < deadline)
    say("result " + json.dumps({"cycles": n, "seconds": (time.monotonic_ns() - start) / 1e9,
                                "failures": 0}))
    expect("bye")
    r.close()


def run_t(host, port, key, seconds, acquirers, shared):
    if shared:
        pool = redis.BlockingConnectionPool(host=host, port=port, max_connections=1)
        clients = [redis.Redis(connection_pool=pool)] * acquirers
    else:
        clients = [redis.Redis(host=host, port=port) for _ in range(acquirers)]
    go = threading.Event()
    warm = threading.Barrier(acquirers + 1)
    phase = {"deadline": 0}
    counts = [0] * acquirers

    def thread(i):
        name = f"{key}:{i}"
        cycles(clients[i], name, lambda n: n < WARMUP_T)
        warm.wait()
        go.wait()
        deadline = phase["deadline"]
        counts[i] = cycles(clients[i], name, lambda _: time.monotonic_ns() < deadline)

    threads = [threading.Thread(target=thread, args=(i,)) for i in range(acquirers)]
    for t in threads:
        t.start()
    warm.wait()
    ready("threads")
    if not expect("go"):
        sys.exit(1)
    start = time.monotonic_ns()
    phase["deadline"] = start + int(seconds * 1e9)
    go.set()
    for t in threads:
        t.join()
    say("result " + json.dumps({"cycles": sum(counts),
                                "seconds": (time.monotonic_ns() - start) / 1e9, "failures": 0}))
    expect("bye")
    for c in set(clients):
        c.close()


def run_h(host, port, key, hold_ms):
    r = redis.Redis(host=host, port=port)
    sent = itertools.count()  # next() on it is atomic under the GIL
    execute = r.execute_command

    def counted(*args, **kwargs):
        next(sent)
        return execute(*args, **kwargs)

    r.execute_command = counted  # the Lock's SET and its scripts go through here
    news = threading.Condition()
    state = {"other": 0, "stop": False, "bye": False}

    def reader():
        for line in sys.stdin:
            word, _, arg = line.strip().partition(" ")
            with news:
                if word == "N":
                    state["other"] = max(state["other"], int(arg))
                elif word == "stop":
                    state["stop"] = True
                elif word == "bye":
                    state["stop"] = state["bye"] = True
                news.notify_all()
        with news:  # EOF: compare.py is gone
            state["stop"] = state["bye"] = True
            news.notify_all()

    lock = r.lock(key, timeout=LEASE_S)
    lock.acquire()  # warm-up: the release script loaded
    lock.release()
    ready("sequential")
    if not expect("go"):
        sys.exit(1)
    threading.Thread(target=reader, daemon=True).start()
    sent0 = next(sent)
    records = []
    while not state["stop"]:
        lock = r.lock(key, timeout=LEASE_S)
        lock.acquire()
        acquired = time.monotonic_ns()
        say(f"A {acquired}")
        time.sleep(hold_ms / 1000)
        released = time.monotonic_ns()
        lock.release()
        records.append([acquired, released, time.monotonic_ns()])
        with news:  # sit out until another process has taken the lock
            news.wait_for(lambda: state["other"] > acquired or state["stop"])
    requests = next(sent) - sent0 - 1
    say("result " + json.dumps({"requests": requests, "failures": 0, "records": records}))
    with news:
        news.wait_for(lambda: state["bye"])
    r.close()


def main():
    if len(sys.argv) != 8 or sys.argv[1] not in ("U", "T1", "T50", "H"):
        sys.stderr.write("usage: redis_py_peer.py U|T1|T50|H HOST PORT KEY SECONDS HOLD_MS ACQUIRERS\n")
        sys.exit(2)
    workload, host, port, key = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    seconds, hold_ms, acquirers = float(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
    if workload == "U":
        run_u(host, port, key, seconds)
    elif workload == "H":
        run_h(host, port, key, hold_ms)
    else:
        run_t(host, port, key, seconds, acquirers, shared=workload == "T1")


if __name__ == "__main__":
    main()
