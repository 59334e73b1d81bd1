#!/usr/bin/env python3
"""Writes well-formed agent record chunks (include/agent.h) into a folder, as
seeds for fuzz_records: one of each record type, and chunks mixing them.

  fuzz_seeds.py DIR
"""
import os
import struct
import sys

API, KERNEL, MEMCPY, MEMSET, OVERHEAD, DROPPED, STRING, ERROR, STARTED, FLUSHED = range(0x101, 0x10b)


def rec(rtype, body):
    return struct.pack("<II", rtype, 8 + len(body)) + body


def padded(b):
    return b + b"\0" * (-len(b) % 8)


def string(sid, text, offset=0, total=None):
    total = len(text) if total is None else total
    return rec(STRING, struct.pack("<IIII", sid, total, offset, len(text)) + padded(text))


def error(code, stage, window, msg):
    return rec(ERROR, struct.pack("<IIII", code, stage, window, len(msg)) + padded(msg))


SEEDS = {
    "api": rec(API, struct.pack("<QQIIIIII", 10, 20, 2, 211, 100, 101, 1, 0)),
    "kernel": rec(KERNEL, struct.pack("<QQIIII3I3IIIIIQII", 30, 40, 0, 1, 7, 1, 2, 1, 1,
                                      64, 1, 1, 256, 0, 32, 1, 0, 0, 0)),
    "memcpy": rec(MEMCPY, struct.pack("<QQQIIIIIIIIQII", 1, 2, 4096, 1, 1, 3, 0, 0, 1, 13, 2,
                                      0, 0, 2)),
    "memset": rec(MEMSET, struct.pack("<QQQIIIIIIQII", 1, 2, 1024, 0x20, 3, 0, 1, 13, 3, 0, 0, 0)),
    "overhead": rec(OVERHEAD, struct.pack("<QQII3II", 1, 2, 1 << 16, 2, 100, 101, 0, 0)),
    "dropped": rec(DROPPED, struct.pack("<QII", 5, 1, 0)),
    "string": string(1, b"_ZN2ns5scaleIfEEvPT_i"),
    "string_pieces": string(2, b"_Z3foo", 0, 12) + string(2, b"barbaz", 6, 12),
    "error": error(39, 2, 1, b"cuptiActivityRegisterCallbacks: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS"),
    "started": rec(STARTED, struct.pack("<QIIII", 5, 1, 130001, 100, 1)),
    "flushed": rec(FLUSHED, struct.pack("<QIIQQ", 6, 1, 1, 3, 0)),
    "unknown": rec(0x1ff, b"\xaa" * 8),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    SEEDS["window"] = (SEEDS["started"] + SEEDS["string"] + SEEDS["api"] + SEEDS["kernel"] +
                       SEEDS["memcpy"] + SEEDS["memset"] + SEEDS["dropped"] + SEEDS["flushed"])
    for name, data in SEEDS.items():
        with open(os.path.join(out, "seed-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
