"""Sessions lost, counted from the balancer's request lines (capbench/analysis/session_loss.py): a user whose request found no
session after one of theirs had had one; in the format our lb writes (haproxy.cfg's log-format)."""
from __future__ import annotations

from capbench.analysis import session_loss
from capbench.hosts import haproxy_log

T0 = 1_800_000_000.0


def line(accept: float, server: str, user: str = "-", session: str = "-", status: int = 200) -> str:
    return f"capbench-req {T0 + accept:.3f} 0 0 {server} {status} ---- 0 0 5 10 0 {user} {session}"


def test_the_user_and_the_session_answer_are_read_and_older_lines_still_parse():
    [old, new, plain] = haproxy_log.parse_requests("\n".join([
        "capbench-req 1800000000.000 0 0 node1 200 ---- 0 0 5 10 0",  # before the fields were logged
        line(1, "node2", "u0000001-0a1b2c3d", "found"),
        line(2, "node3"),  # a /grind request: no session header
    ]))
    assert (old.user, old.session) == (None, None)
    assert (new.server, new.user, new.session) == ("node2", "u0000001-0a1b2c3d", "found")
    assert (plain.user, plain.session) == (None, None)


def sticky_users_and_a_killed_node() -> list[haproxy_log.Request]:
    """Users a..d stuck to node1 (a, b) and node2 (c, d); node1 dies at t=10 and its users go to node2."""
    lines = [line(0, "node1", "a", "new"), line(0.1, "node1", "b", "new"),
             line(0.2, "node2", "c", "new"), line(0.3, "node2", "d", "new")]
    lines += [line(5, "node1", "a", "found"), line(5.1, "node2", "c", "found")]
    lines += [line(11, "node2", "a", "new"), line(11.1, "node2", "b", "new"), line(11.2, "node2", "d", "found"),
              line(12, "node2", "a", "found"), line(12.1, "node2", "e", "new")]  # e: a first visit, nothing lost
    lines += [line(12.2, "node2", "b", status=503)]  # refused before the servlet: nothing said of the session
    return haproxy_log.parse_requests("\n".join(lines))


def test_a_killed_nodes_users_lose_their_sessions_once_and_first_visits_lose_nothing():
    figures = session_loss.sessions_lost(sticky_users_and_a_killed_node())
    assert figures["lost"] == 2 and figures["users_lost"] == 2 and figures["lost_from_node"] == {"node1": 2}
    assert figures["answered"] == 11 and figures["users"] == 5


def test_losses_are_counted_from_a_moment_on_with_the_sessions_made_before_it_known():
    figures = session_loss.sessions_lost(sticky_users_and_a_killed_node(), since=T0 + 10)
    assert figures["answered"] == 5 and figures["moved"] == 2
    assert figures["lost"] == 2 and figures["lost_from_node"] == {"node1": 2}
    assert session_loss.describe(figures) == ("2 of 5 answered requests found no session their user had had (40 %; 2 users; "
                                          "held by node1: 2); 2 moved to another node")


def test_without_stickiness_every_move_to_a_node_without_the_session_loses_it():
    lines = [line(i, f"node{i % 2 + 1}", "a", "new" if i < 2 else "found") for i in range(6)]
    figures = session_loss.sessions_lost(haproxy_log.parse_requests("\n".join(lines)))
    assert figures["lost"] == 1 and figures["moved"] == 5  # its second request, on node2, made a new session
    assert session_loss.describe(session_loss.sessions_lost([])) == "no /session request was answered"


def test_the_requests_that_lost_a_session_in_a_window_are_named():
    requests = sticky_users_and_a_killed_node()
    assert [r.user for r in session_loss.lost_between(requests, T0 + 11, T0 + 11.1)] == ["a"]  # b's at 11.1: after
    assert [r.user for r in session_loss.lost_between(requests, T0, T0 + 20)] == ["a", "b"]
    assert session_loss.lost_between(requests, T0, T0 + 10) == []


def test_a_request_sent_before_the_users_first_answer_came_back_loses_nothing():
    # A new user's two first requests in flight together (the CI run of 2026-11-27: 140 ms apart, the first
    # answered after 420 ms): the second could not carry a cookie; once an answer is back, a "new" is a loss.
    def timed(accept: float, server: str, session: str, total_ms: int) -> str:
        return f"capbench-req {T0 + accept:.3f} 0 0 {server} 200 ---- 0 0 5 {total_ms} 0 u {session}"
    requests = haproxy_log.parse_requests("\n".join([timed(0.0, "node2", "new", 420), timed(0.14, "node1", "new", 384),
                                                       timed(1.0, "node1", "found", 5), timed(2.0, "node3", "new", 5)]))
    assert [round(r.end - T0, 3) for r in requests[:2]] == [0.42, 0.524]
    assert [(round(r.received - T0, 3), r.server) for r in session_loss.lost_between(requests, T0, T0 + 3)] == [
        (2.0, "node3")]
    # The user kept the last session that came back, node1's (its cookie was set after node2's).
    assert session_loss.sessions_lost(requests)["lost_from_node"] == {"node1": 1}
