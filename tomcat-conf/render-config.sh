#!/usr/bin/env bash
# Writes what this node's Tomcat starts from into $CATALINA_BASE/temp (conf/ is read-only): server.xml, with
# the session replication where it says @cluster when TOMCAT_SESSION_REPLICATION=1, and the default context
# (conf/context.xml links to it), which says where sessions live:
# - 0: in this node's heap only (a Manager that saves nothing at a stop), so a node that restarts has lost its
#   sessions as a crashed one has;
# - 1: no Manager in the context, so the cluster's DeltaManager keeps them and sends every change to the other
#   nodes (Tribes over TCP, port 4000): a node's death costs no session that had reached another node.
# The members are static (the bench network has no multicast between engines): CAPBENCH_NODES_LIST, each by its
# address on the bench network, the one PCP_ALLOW_HOSTS admits (a node also sits on the database's network).
set -euo pipefail

REPLICATION_PORT=4000
# How long a start waits for the other nodes' names (they start alongside this one).
PEER_WAIT_S=30
out=$CATALINA_BASE/temp
bench_prefix="${PCP_ALLOW_HOSTS%.\*}."

# bench_address NAME: NAME's IPv4 address on the bench network, or nothing.
bench_address() {
    getent ahostsv4 "$1" | awk -v net="$bench_prefix" 'index($1, net) == 1 {print $1; exit}'
}

# unique_id NAME: Tribes' 16-byte member id, from the node's number (node12 → {0,…,0,12}).
unique_id() {
    echo "{0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,${1#node}}"
}

cluster_xml() {
    local self=$1 address=$2 peer peer_address waited
    # channelSendOptions 6 (acknowledged, synchronous): a request's changes have reached the other nodes before
    # its answer leaves, and in order (sent asynchronously, 8, a new session's first attributes were at times
    # applied before the session itself existed there, and lost).
    cat <<EOF
<Cluster className="org.apache.catalina.ha.tcp.SimpleTcpCluster" channelSendOptions="6">
  <Manager className="org.apache.catalina.ha.session.DeltaManager" expireSessionsOnShutdown="false"
           notifyListenersOnReplication="false"/>
  <Channel className="org.apache.catalina.tribes.group.GroupChannel">
    <Membership className="org.apache.catalina.tribes.membership.StaticMembershipService">
      <LocalMember className="org.apache.catalina.tribes.membership.StaticMember" uniqueId="$(unique_id "$self")"/>
EOF
    for peer in $CAPBENCH_NODES_LIST; do
        [ "$peer" != "$self" ] || continue
        peer_address=$(bench_address "$peer")
        for (( waited = 0; waited < PEER_WAIT_S && ${#peer_address} == 0; waited++ )); do
            sleep 1
            peer_address=$(bench_address "$peer")
        done
        if [ -z "$peer_address" ]; then
            # A node that is not up cannot be a member now; it joins when it starts and lists this one.
            echo "capbench: $self: $peer has no address on the bench network after ${PEER_WAIT_S}s: not a member" >&2
            continue
        fi
        echo "      <Member className=\"org.apache.catalina.tribes.membership.StaticMember\" host=\"$peer_address\"" \
             "port=\"$REPLICATION_PORT\" uniqueId=\"$(unique_id "$peer")\"/>"
    done
    cat <<EOF
    </Membership>
    <Receiver className="org.apache.catalina.tribes.transport.nio.NioReceiver" address="$address"
              port="$REPLICATION_PORT" autoBind="0"/>
    <Sender className="org.apache.catalina.tribes.transport.ReplicationTransmitter">
      <Transport className="org.apache.catalina.tribes.transport.nio.PooledParallelSender"/>
    </Sender>
    <Interceptor className="org.apache.catalina.tribes.group.interceptors.TcpPingInterceptor"/>
    <Interceptor className="org.apache.catalina.tribes.group.interceptors.TcpFailureDetector"/>
    <Interceptor className="org.apache.catalina.tribes.group.interceptors.MessageDispatchInterceptor"/>
  </Channel>
  <Valve className="org.apache.catalina.ha.tcp.ReplicationValve" filter=""/>
  <ClusterListener className="org.apache.catalina.ha.session.ClusterSessionListener"/>
</Cluster>
EOF
}

if [ "$TOMCAT_SESSION_REPLICATION" = 1 ]; then
    address=$(bench_address "$NODE_NAME")
    if [ -z "$address" ]; then
        echo "capbench: $NODE_NAME has no address on the bench network ($bench_prefix*) to replicate sessions on" >&2
        exit 2
    fi
    cluster_xml "$NODE_NAME" "$address" > "$out/cluster.xml"
    sed -e "/<!-- @cluster/r $out/cluster.xml" "$CATALINA_BASE/conf/server.xml" > "$out/server.xml"
    echo '<Context/>' > "$out/context.xml"
else
    cp "$CATALINA_BASE/conf/server.xml" "$out/server.xml"
    echo '<Context><Manager pathname=""/></Context>' > "$out/context.xml"
fi
