"""Thread dumps taken by bench-variants on the real nodes (jattach threaddump, as jcmd Thread.print prints
them), kept in tests/profiling/data/: each request thread classified, the blocked ones by monitor."""
import gzip
from pathlib import Path

import pytest

from capbench.profiling import threaddump

DATA = Path(__file__).parent / "data"


def dump(name: str) -> str:
    with gzip.open(DATA / f"threaddump-{name}.txt.gz", "rt") as text:
        return text.read()


def test_v1_at_capacity_request_threads_wait_for_the_one_grinder():
    # node1 with v1 at its capacity: 41 request threads (grep -c '^"http-exec-'), 4 BLOCKED on the shared
    # SynchronizedAllocatingGrinder, 36 idle in Tomcat's TaskQueue, 1 writing a response.
    summary = threaddump.summarize([dump("v1-node1")])
    assert summary["request_threads"] == 41
    assert summary["mean_by_kind"] == {"idle": 36, "grinding": 0, "pool": 0, "database": 0, "running": 1, "blocked": 4,
                                       "waiting": 0}
    assert summary["blocked_on"] == {"capbench.grinder.SynchronizedAllocatingGrinder": 4.0}


def test_a_database_pool_too_small_holds_request_threads_in_its_borrow():
    # node1 with DB_POOL_SIZE=1 and DB_CONNECTION_SCOPE=request under 24 concurrent /query?rows=1000&join=1&calls=20
    # (oha -c 24): 24 request threads TIMED_WAITING inside HikariPool.getConnection, 2 idle. (657 of the burst's
    # 672 requests were answered 503 by the pool's 250 ms timeout.)
    summary = threaddump.summarize([dump("pool-node1")])
    assert summary["request_threads"] == 26
    assert summary["mean_by_kind"] == {"idle": 2, "grinding": 0, "pool": 24, "database": 0, "running": 0,
                                       "blocked": 0, "waiting": 0}
    assert threaddump.describe(summary) == ("of 26 request threads: 24 waiting for a pooled connection, 2 idle "
                                            "(mean of 1 dumps)")


def test_v3_pool_members_each_lock_their_own_instance():
    # node3 overloaded with v3: 49 threads read BLOCKED, 44 of them waiting for one of the pool's
    # ReusingGrinders; the other 5 hold theirs (just entered, "- locked"), as do the 2 RUNNABLE grinders.
    summary = threaddump.summarize([dump("v3-node3")])
    assert summary["request_threads"] == 179
    assert summary["mean_by_kind"] == {"idle": 128, "grinding": 7, "pool": 0, "database": 0, "running": 0,
                                       "blocked": 44, "waiting": 0}
    assert summary["blocked_on"] == {"capbench.grinder.ReusingGrinder": 44.0}
    assert summary["holding"] == {"capbench.grinder.ReusingGrinder": 7.0}


def test_means_over_several_dumps_and_unreadable_ones_are_counted():
    summary = threaddump.summarize([dump("v1-node1"), dump("v3-node3"), "Connected to remote JVM\nerror 13"])
    assert summary["dumps"] == 2 and summary["unreadable"] == 1
    assert summary["request_threads"] == 110
    assert summary["blocked_on"] == {"capbench.grinder.ReusingGrinder": 22.0,
                                     "capbench.grinder.SynchronizedAllocatingGrinder": 2.0}
    assert threaddump.describe(summary) == (
        "of 110 request threads: 3.5 grinding, 0.5 running, 82 idle, 22 blocked on "
        "capbench.grinder.ReusingGrinder, 2 blocked on capbench.grinder.SynchronizedAllocatingGrinder "
        "(mean of 2 dumps)")
    assert threaddump.summarize([]) == {"dumps": 0, "unreadable": 0, "request_threads": None, "mean_by_kind": {},
                                        "blocked_on": {}, "waiting_on": {}, "holding": {}}


def test_not_a_thread_dump_is_refused():
    with pytest.raises(threaddump.DumpError, match="not a HotSpot thread dump"):
        threaddump.parse("Connected to remote JVM\nJVM response code = 1")
