#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets that read server replies
(tests/fuzz/corpus/<target>/seed-*): real RESP replies of every script,
of CLUSTER SLOTS, SENTINEL, ROLE, TIME and MOVED/ASK, as redis-server
sends them (the shapes the scripts' return statements give, scripts/).
Rerun after changing a reply's shape:

    python3 tests/fuzz/seeds.py

The url, key_parse, names, tls and args seeds are files written by hand;
regress-* files are inputs that once broke a target (never rewrite
them)."""
import os
import sys


def resp(v):
    """v as RESP2: int -> integer, bytes -> bulk string, str -> status,
    None -> nil, list -> array, Err -> error."""
    if v is None:
        return b"$-1\r\n"
    if isinstance(v, bool):
        raise TypeError("bool")
    if isinstance(v, int):
        return b":%d\r\n" % v
    if isinstance(v, bytes):
        return b"$%d\r\n%s\r\n" % (len(v), v)
    if isinstance(v, str):
        return b"+" + v.encode() + b"\r\n"
    if isinstance(v, Err):
        return b"-" + v.text.encode() + b"\r\n"
    if isinstance(v, list):
        return b"*%d\r\n" % len(v) + b"".join(resp(x) for x in v)
    raise TypeError(type(v))


class Err:
    def __init__(self, text):
        self.text = text


def flat(d):
    out = []
    for k, v in d:
        out += [k.encode(), v.encode()]
    return out


TRY = [[1, 7, 1], [1, 123456789, 3], [0, 2950, 0], [0, 2950, 1],
       [0, -1, 4], [0, 1500], [-1], Err("NOSCRIPT No matching script.")]
RELEASE = [[1, 0], [1, 2], [0], 1, 0,
           Err("ERR Error running script (call to f_x): @user_script:1")]
INFO = [[0, 0, -2, 41, 0, 0, 0, 0, 0], [1, 1, 29876, 42, 1, 3, 0, 0, 0],
        [1, 0, 5000, 12, 3, 1, 0, 2, 0], [1, 2, 8000, 77, 2, 0, 0, 2, 5]]
SLOTS = [
    [[0, 5460, [b"127.0.0.1", 7000, b"a" * 40], [b"127.0.0.1", 7003, b"d" * 40]],
     [5461, 10922, [b"127.0.0.1", 7001, b"b" * 40]],
     [10923, 16383, [b"127.0.0.1", 7002, b"c" * 40, [b"hostname", b"n3"]]]],
    [[0, 16383, [b"", 6379, b"e" * 40]]],
    [[0, 100, [b"?", 6379]], [50, 200, [b"::1", 7005]]],
    [],
    [[16383, 0, [b"h", 1]]],
    [[0, 16384, [b"h", 1]]],
]
SENTINEL = [
    [b"127.0.0.1", b"6380"],
    None,
    [b"::1", b"6379"],
    [b"h", b"0"],
    flat([("name", "mymaster"), ("ip", "127.0.0.1"), ("port", "6380"),
          ("flags", "master"), ("config-epoch", "7")]),
    [flat([("name", "127.0.0.1:6381"), ("ip", "127.0.0.1"), ("port", "6381"),
           ("flags", "slave")]),
     flat([("name", "127.0.0.1:6382"), ("ip", "127.0.0.1"), ("port", "6382"),
           ("flags", "s_down,slave,disconnected")])],
    [b"message", b"+switch-master",
     b"mymaster 127.0.0.1 6380 127.0.0.1 6381"],
    [b"message", b"+promoted-slave",
     b"slave 127.0.0.1:6381 127.0.0.1 6381 @ mymaster 127.0.0.1 6380"],
    Err("NOPERM this user has no permissions"),
]
ROLE = [
    [b"master", 3129659, [[b"127.0.0.1", b"9001", b"3129242"],
                          [b"127.0.0.1", b"9002", b"3129543"]]],
    [b"master", 0, []],
    [b"slave", b"127.0.0.1", 9000, b"connected", 3167038],
    [b"sentinel", [b"resque-master", b"html-fragments-master"]],
    [b"master"],
]
CODE = [
    "OK", Err("MOVED 3999 127.0.0.1:6381"), Err("ASK 3999 127.0.0.1:6381"),
    Err("TRYAGAIN Multiple keys request during rehashing of slot"),
    Err("CLUSTERDOWN The cluster is down"), Err("READONLY You can't write"),
    Err("NOAUTH Authentication required."), Err("WRONGPASS invalid pw"),
    Err("ERR invalid password"), Err("LOADING Redis is loading"),
    Err("OOM command not allowed"), Err("ERR unknown command"),
    [b"message", b"rdl:lock.ch:{a}:c1", b"7:1"],
    [b"smessage", b"rdl:rw.ch:{a}", b"1"],
    [b"sunsubscribe", b"rdl:rw.ch:{a}", 0],
    [b"1700000000", b"123456"], [b"99", b"1000000"],
]
REDIRECT = [Err("MOVED 3999 127.0.0.1:6381"), Err("ASK 1 ::1:7000"),
            Err("MOVED 16383 :6379"), Err("MOVED 16384 h:1"),
            Err("MOVED 1 h:65536"), Err("ASK 12 host.example.com:7001")]
LATCH = [[1, b"3"], [0, b"0"], [1, b"18446744073709551615"],
         [1, b"18446744073709551616"], [b"5", 2999], [b"0", -2],
         [b"-1", 5], [1, 3]]


SCAN = [
    [b"0", [b"rdl:lock:{orders}", b"rdl:rw.fence:{jobs}", b"rdl:sem.x:{s}",
            b"rdl:latch:{l}", b"session:42", b"rdl:fair:{a}b{}"]],
    [b"1792", []],
    [b"0", [b"rdl:lock:{order:42}:stock", b"rdl:lock:{{a}}",
            b"rdl:lock.ch:{n}:0123abcd"]],
]


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    sets = {
        "reply_try": [resp(x) for x in TRY],
        # first byte: the number of locks - 1
        "reply_try_set": [bytes([1]) + resp([1, 5, 1, 9, 2]),
                          bytes([2]) + resp([0, 1200, 2]),
                          bytes([0]) + resp([Err("CROSSSLOT Keys")])],
        "reply_release": [resp(x) for x in RELEASE],
        "reply_info": [resp(x) for x in INFO],
        # first byte: the number of holds - 1
        "reply_renew": [bytes([2]) + resp([1, 0, 1]),
                        bytes([0]) + resp([1]),
                        bytes([1]) + resp([1, b"1"])],
        "reply_latch": [resp(x) for x in LATCH],
        # first byte: calls - 1; 8 bytes: which call is a release
        "reply_batch": [bytes([2, 2, 0, 0, 0, 0, 0, 0, 0]) +
                        resp([[1, 7, 1], [1, 0], [0, 2950, 1]]),
                        bytes([3, 0, 0, 0, 0, 0, 0, 0, 0]) +
                        resp([[1, 8, 1], Err("OOM no memory")]),
                        bytes([0, 0, 0, 0, 0, 0, 0, 0, 0]) + resp(None)],
        "reply_code": [resp(x) for x in CODE],
        # first byte: the host buffer's size - 1
        "reply_redirect": [bytes([255]) + resp(x) for x in REDIRECT] +
                          [bytes([8]) + resp(REDIRECT[5])],
        "slots": [resp(x) for x in SLOTS],
        # the master's name, a NUL, the reply
        "sentinel": [b"mymaster\0" + resp(x) for x in SENTINEL],
        "role": [resp(x) for x in ROLE],
        "reply_scan": [resp(x) for x in SCAN],
    }
    for target, seeds in sets.items():
        d = os.path.join(root, target)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.startswith("seed-"):
                os.remove(os.path.join(d, f))
        for i, s in enumerate(seeds, 1):
            with open(os.path.join(d, "seed-%02d" % i), "wb") as f:
                f.write(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
