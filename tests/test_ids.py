"""Ids of requests, reservations and bookings: unique, uuid4-shaped, and a forked
child (a worker) never repeats its parent's."""

from __future__ import annotations

import os
import re

from gateway.ids import new_id


def test_ids_are_unique_and_shaped_like_uuid4_hex() -> None:
    ids = [new_id() for _ in range(100_000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids[:1000])


def test_a_forked_child_makes_ids_of_its_own() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first ids, to the parent
        os.close(read)
        os.write(write, " ".join(new_id() for _ in range(100)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = set(pipe.read().split())
    os.waitpid(pid, 0)
    parent = {new_id() for _ in range(100)}
    assert len(child) == 100
    assert not child & parent
