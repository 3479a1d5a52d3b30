#!/usr/bin/env python3
"""Records written and dropped in the ring files of a directory, read from the header (RING.md offsets), without
Java: for GPU-host scripts that run the plugin with no consumer. Usage: ring_counts.py DIR [LABEL]"""
import glob
import os
import struct
import sys

LANE_COUNT, LANE_TABLE, LANE_ENTRY = 192, 147456, 256
DROPPED_FULL, DROPPED_ABANDONED, DROPPED_CONTENDED = 896, 904, 912


def counts(path):
    with open(path, "rb") as f:
        head = f.read(LANE_TABLE + 64 * LANE_ENTRY)
    (lanes,) = struct.unpack_from("<I", head, LANE_COUNT)
    written = sum(struct.unpack_from("<Q", head, LANE_TABLE + i * LANE_ENTRY)[0] for i in range(lanes))
    full, abandoned, contended = (struct.unpack_from("<Q", head, o)[0]
                                  for o in (DROPPED_FULL, DROPPED_ABANDONED, DROPPED_CONTENDED))
    return written, full, abandoned, contended


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ring_counts.py DIR [LABEL]")
    label = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    rings = sorted(glob.glob(os.path.join(sys.argv[1], "*.ring")))
    if not rings:
        print(f"{label}: no ring file")
        return
    total = [0, 0, 0, 0]
    for r in rings:
        total = [a + b for a, b in zip(total, counts(r))]
    print(f"{label}: {len(rings)} ring(s), records claimed {total[0]}, dropped full {total[1]}, "
          f"abandoned {total[2]}, contended {total[3]}")


if __name__ == "__main__":
    main()
