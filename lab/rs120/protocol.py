"""Check lab/rs120's hand-over protocol without a GPU: the three partitions
of _rs_decode_kernel as Python generators making the same mbarrier waits
and arrives, with the same slot and parity arithmetic as kernel.py.in,
run under every interleaving a seeded random scheduler picks. It fails on
a deadlock, on a slot written while a group still reads it, and on a read
of a slot that does not hold the tile the reader expects.

    python3 lab/rs120/protocol.py        # exit 1 on the first fault

The mbarrier model is PTX's: a barrier counts arrivals towards its current
phase; the phase completes when they reach the count; wait(parity)
passes once the phase of that parity has completed, that is while the
current phase's parity differs from it (so waiting on parity 1 of a fresh
barrier passes).
"""

import random
import sys

SLOTS = 3


class Barrier:
    def __init__(self, count):
        self.count, self.pending, self.phase = count, count, 0

    def arrive(self):
        self.pending -= 1
        if self.pending == 0:
            self.phase += 1
            self.pending = self.count

    def passes(self, parity):
        return (self.phase & 1) != parity


class State:
    def __init__(self):
        self.ready = [Barrier(1) for _ in range(SLOTS)]
        self.empty = [Barrier(2) for _ in range(SLOTS)]
        self.p_full = [Barrier(1) for _ in range(2)]
        self.p_free = [Barrier(1) for _ in range(2)]
        self.ml_ready = Barrier(1)
        self.k = [None] * SLOTS  # tile each K slot holds
        self.k_readers = [set() for _ in range(SLOTS)]  # groups reading it now
        self.p = [None] * 2  # tile each P slot holds
        self.p_reading = [False] * 2
        self.ml = None


def fault(msg):
    raise AssertionError(msg)


def producer(s, n):
    for i in range(n):
        slot = i % SLOTS
        yield ("wait", s.empty[slot], ((i // SLOTS) & 1) ^ 1)
        if s.k_readers[slot]:
            fault(
                f"producer overwrites slot {slot} (tile {i}) while {s.k_readers[slot]} read it"
            )
        s.k[slot] = i
        yield ("step",)
        s.ready[slot].arrive()


def scores(s, n):
    for i in range(n):
        slot = i % SLOTS
        yield ("wait", s.ready[slot], (i // SLOTS) & 1)
        if s.k[slot] != i:
            fault(f"score group reads tile {s.k[slot]} in slot {slot}, wants {i}")
        s.k_readers[slot].add("score")
        yield ("step",)
        s.k_readers[slot].discard("score")
        s.empty[slot].arrive()
        pslot = i % 2
        yield ("wait", s.p_free[pslot], ((i // 2) & 1) ^ 1)
        if s.p_reading[pslot]:
            fault(
                f"score group overwrites P slot {pslot} while the value group reads it"
            )
        s.p[pslot] = i
        yield ("step",)
        s.p_full[pslot].arrive()
    s.ml = n
    s.ml_ready.arrive()


def values(s, n):
    for i in range(n):
        slot = i % SLOTS
        pslot = i % 2
        yield ("wait", s.ready[slot], (i // SLOTS) & 1)
        yield ("wait", s.p_full[pslot], (i // 2) & 1)
        if s.p[pslot] != i:
            fault(
                f"value group reads P of tile {s.p[pslot]} in slot {pslot}, wants {i}"
            )
        s.p_reading[pslot] = True
        yield ("step",)
        s.p_reading[pslot] = False
        s.p_free[pslot].arrive()
        if s.k[slot] != i:
            fault(f"value group reads tile {s.k[slot]} in slot {slot}, wants {i}")
        s.k_readers[slot].add("value")
        yield ("step",)
        s.k_readers[slot].discard("value")
        s.empty[slot].arrive()
    yield ("wait", s.ml_ready, 0)
    if s.ml != n:
        fault("value group reads m and l before the score group wrote them")


def run(n, seed):
    s = State()
    rng = random.Random(seed)
    parts = {"producer": producer(s, n), "scores": scores(s, n), "values": values(s, n)}
    blocked = {name: None for name in parts}
    while parts:
        runnable = [
            name
            for name in parts
            if blocked[name] is None or blocked[name][0].passes(blocked[name][1])
        ]
        if not runnable:
            fault(f"deadlock with {n} tiles: " + ", ".join(f"{k} waits" for k in parts))
        name = rng.choice(runnable)
        blocked[name] = None
        try:
            op = next(parts[name])
        except StopIteration:
            del parts[name]
            continue
        if op[0] == "wait":
            blocked[name] = (op[1], op[2])


def main():
    runs = 0
    try:
        for n in range(0, 13):
            for seed in range(400):
                run(n, seed)
                runs += 1
    except AssertionError as e:
        print("FAIL:", e)
        return 1
    print(f"ok: {runs} runs (0-12 tiles, 400 schedules each), no deadlock or hazard")
    return 0


if __name__ == "__main__":
    sys.exit(main())
