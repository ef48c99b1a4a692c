"""run.json's node_http from one probe through the balancer (capbench/load/node_http_facts.py): the balancer's word
on what it spoke to the node, and the node's own on what the request came in as."""
from __future__ import annotations

import pytest

from capbench.hosts.backend import ClusterError
from capbench.load import node_http_facts

# curl -fsS --http1.1 -D - http://lb:8080/info on the load host, NODE_HTTP=2, TLS=off (2026-12-07; the body cut).
ANSWER = ("HTTP/1.1 200 \r\ncache-control: no-store\r\ncontent-type: application/json;charset=UTF-8\r\n"
          "x-capbench-node: node1\r\nx-capbench-node-http: 2\r\n\r\n"
          '{"node":"node1","server":"Apache Tomcat/10.1.60 (Debian)","request_protocol":"HTTP/2.0",'
          '"request_secure":false}')


def test_the_balancer_and_the_node_each_say_the_request_went_in_http_2():
    record = node_http_facts.parse_record(ANSWER, "http://lb:8080/info", passed=False)
    assert record["balancer_spoke"] == "HTTP/2" and record["node_saw"] == "HTTP/2.0" and record["node"] == "node1"
    assert record["node_secure"] is False and record["setting"] == "2"


def test_a_balancer_that_spoke_http_1_1_though_the_setting_says_2_is_a_cluster_error():
    older = ANSWER.replace("x-capbench-node-http: 2", "x-capbench-node-http: 1").replace("HTTP/2.0", "HTTP/1.1")
    with pytest.raises(ClusterError, match=r"NODE_HTTP=2, but the balancer spoke HTTP/1.1 .*`make up` re-creates it"):
        node_http_facts.parse_record(older, "http://lb:8080/info", passed=False)
    unnamed = ANSWER.replace("x-capbench-node-http: 2\r\n", "")
    with pytest.raises(ClusterError, match="spoke an unnamed protocol"):
        node_http_facts.parse_record(unnamed, "http://lb:8080/info", passed=False)


def test_passed_through_the_node_alone_says_and_an_application_without_the_grinder_says_nothing_of_it():
    # TLS=node, curl --http2: the node's connector answered h2 by ALPN, no header of the balancer's.
    passed = "HTTP/2 200 \r\ncontent-type: application/json\r\n\r\n" + ANSWER.split("\r\n\r\n", 1)[1]
    record = node_http_facts.parse_record(passed, "https://lb:8443/info", passed=True)
    assert record["balancer_spoke"] is None and record["node_saw"] == "HTTP/2.0" and record["node"] == "node1"
    plain = ANSWER.split("\r\n\r\n", 1)[0] + "\r\n\r\n<html>ok</html>"
    record = node_http_facts.parse_record(plain, "http://lb:8080/health", passed=False)
    assert record["balancer_spoke"] == "HTTP/2" and record["node_saw"] is None
