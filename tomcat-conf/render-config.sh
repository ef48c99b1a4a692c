#!/usr/bin/env bash
# Writes what this node's Tomcat starts from into $CATALINA_BASE/temp (conf/ is read-only): server.xml, with
# the session replication where it says @cluster when TOMCAT_SESSION_REPLICATION=1 and, with a user's
# application, the shared database's DataSource where it says @datasource, and the TLS connector where it says
# @tls-connector when NODE_TLS=1, and HTTP/2 on the connectors where it says @http2 when NODE_HTTP=2 (below); and
# the default context (conf/context.xml links to it), which links that DataSource and says where sessions live:
# - 0: in this node's heap only (a Manager that saves nothing at a stop), so a node that restarts has lost its
#   sessions as a crashed one has;
# - 1: no Manager in the context, so the cluster's DeltaManager keeps them and sends every change to the other
#   nodes (Tribes over TCP, port 4000): a node's death costs no session that had reached another node.
# No multicast (the bench network has none between engines). On Swarm the members are whatever answers
# DNS_MEMBERSHIP_SERVICE_NAME, the name the other nodes answer to on the bench network (capbench/hosts/stack.py), asked
# again at every heartbeat, so nodes that start one after another, or come back as a task at a new address, find
# each other; elsewhere (Compose, VMs: the nodes start together and keep their addresses) they are static:
# CAPBENCH_NODES_LIST, each by its address on the bench network, the one PCP_ALLOW_HOSTS admits (a node also sits
# on the database's network).
set -euo pipefail

REPLICATION_PORT=4000
# How long a start waits for the other nodes' names (they start alongside this one).
PEER_WAIT_S=30
out=$CATALINA_BASE/temp
bench_prefix="${PCP_ALLOW_HOSTS%.\*}."

# bench_address NAME: NAME's IPv4 address on the bench network, or nothing (getent's status 2 for a name not yet
# known, a peer's task still starting on Swarm, must not end the script under set -e: the caller waits for it).
bench_address() {
    { getent ahostsv4 "$1" || true; } | awk -v net="$bench_prefix" 'index($1, net) == 1 {print $1; exit}'
}

# unique_id NAME: Tribes' 16-byte member id, from the node's number (node12 → {0,…,0,12}).
unique_id() {
    echo "{0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,${1#node}}"
}

# static_membership SELF: the other nodes of CAPBENCH_NODES_LIST by their bench addresses, each waited for.
static_membership() {
    local self=$1 peer peer_address waited
    echo '    <Membership className="org.apache.catalina.tribes.membership.StaticMembershipService">'
    echo "      <LocalMember className=\"org.apache.catalina.tribes.membership.StaticMember\" uniqueId=\"$(unique_id "$self")\"/>"
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
    echo '    </Membership>'
}

# membership SELF: by DNS where a name of the other nodes is given (Swarm), else static.
membership() {
    if [ -n "${DNS_MEMBERSHIP_SERVICE_NAME:-}" ]; then
        # Asked every second (the channel's heartbeat), a member gone from DNS for 3 s is dropped: until then
        # every replicated request waits on its acknowledgement from the dead node (12 s at the defaults).
        echo '    <Membership className="org.apache.catalina.tribes.membership.cloud.CloudMembershipService"' \
             'membershipProviderClassName="dns" expirationTime="3000"/>'
    else
        static_membership "$1"
    fi
}

cluster_xml() {
    local self=$1 address=$2
    # channelSendOptions 6 (acknowledged, synchronous): a request's changes have reached the other nodes before
    # its answer leaves, and in order (sent asynchronously, 8, a new session's first attributes were at times
    # applied before the session itself existed there, and lost).
    cat <<EOF
<Cluster className="org.apache.catalina.ha.tcp.SimpleTcpCluster" channelSendOptions="6">
  <Manager className="org.apache.catalina.ha.session.DeltaManager" expireSessionsOnShutdown="false"
           notifyListenersOnReplication="false"/>
  <Channel className="org.apache.catalina.tribes.group.GroupChannel"${DNS_MEMBERSHIP_SERVICE_NAME:+ heartbeatSleeptime=\"1000\"}>
$(membership "$self")
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

# With a user's application (PostgreSQL's driver linked into lib/ by cluster/provision/node.sh): the shared
# database as one DataSource for the whole node, where server.xml says @datasource, pooled by Tomcat's DBCP with
# the pool settings of tomcat-conf/tunables.env (DB_POOL_SIZE connections at most, a borrow waiting
# DB_POOL_TIMEOUT_MS), and in the default context a link to it, so that every context finds it as
# java:comp/env/jdbc/capbench and all of them together hold at most DB_POOL_SIZE connections, which is what the
# database admits per node. The password is read from the secret at each start into a file only this user reads.
offers_datasource() {
    [ -e "$CATALINA_BASE/lib/postgresql.jar" ] || return 1
    # A node without the database's secret (cluster/app.sh's trial node, alone on its network) offers none.
    [ -r "${DB_PASSWORD_FILE:-/run/secrets/db_password}" ] || {
        echo "capbench: no database password at ${DB_PASSWORD_FILE:-/run/secrets/db_password}: no DataSource" >&2
        return 1
    }
}

global_datasource() {
    local url user password
    url=$(printf '%s' "${DB_URL:-jdbc:postgresql://database:5432/capbench}" | xml_escaped)
    user=$(printf '%s' "${DB_USER:-capbench}" | xml_escaped)
    password=$(xml_escaped < "${DB_PASSWORD_FILE:-/run/secrets/db_password}")
    printf '  <GlobalNamingResources>\n'
    printf '    <Resource name="jdbc/capbench" auth="Container" type="javax.sql.DataSource"\n'
    printf '              driverClassName="org.postgresql.Driver" url="%s" username="%s" password="%s"\n' \
        "$url" "$user" "$password"
    printf '              maxTotal="%s" maxIdle="%s" maxWaitMillis="%s"/>\n' \
        "$DB_POOL_SIZE" "$DB_POOL_SIZE" "$DB_POOL_TIMEOUT_MS"
    printf '  </GlobalNamingResources>\n'
}

# TLS=both or node (NODE_TLS=1): a second connector, on 8443, that the balancer re-encrypts to (both) or passes
# the client's TLS through to (node), with this node's certificate and key (cluster/tls.sh; the Compose secret node_tls, read by this user alone). It shares the
# request threads (the executor) and every connector tunable with 8080, so a request costs the same threads
# either way; JSSE is the TLS (no native library: tomcat-native is not installed), TLS 1.2 and 1.3 only. 8080
# stays for the node's own health check and the harness's probes on the bench network.
tls_connector() {
    cat <<'XML'
    <Connector port="8443" executor="requests" protocol="${capbench.protocolClass}"
               SSLEnabled="true" scheme="https" secure="true"
               acceptCount="${capbench.acceptCount}"
               maxConnections="${capbench.maxConnections}"
               connectionTimeout="${capbench.connectionTimeout}"
               keepAliveTimeout="${capbench.keepAliveTimeout}"
               maxKeepAliveRequests="${capbench.maxKeepAliveRequests}">
      <SSLHostConfig protocols="TLSv1.2+TLSv1.3">
        <Certificate certificateFile="/run/secrets/node_tls" type="EC"/>
      </SSLHostConfig>
XML
    [ "${NODE_HTTP:-1.1}" != 2 ] || http2_protocol
    echo '    </Connector>'
}

# NODE_HTTP=2: Tomcat's HTTP/2 on a connector, with the tunables of tomcat-conf/tunables.env. On the clear
# connector the balancer opens h2c by prior knowledge (its first bytes are HTTP/2's preface; a client's HTTP/1.1,
# the health checks', is still served); on the TLS connector a client offering h2 by ALPN gets it. Each stream is
# a request on the shared executor: maxConcurrentStreamExecution bounds how many of one connection's run at once,
# which with the balancer's few multiplexed connections can bound a node's concurrency below maxThreads.
http2_protocol() {
    cat <<'XML'
      <UpgradeProtocol className="org.apache.coyote.http2.Http2Protocol"
                       maxConcurrentStreams="${capbench.h2MaxConcurrentStreams}"
                       maxConcurrentStreamExecution="${capbench.h2MaxConcurrentStreamExecution}"
                       initialWindowSize="${capbench.h2InitialWindowSize}"/>
XML
}

xml_escaped() {
    sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' | tr -d '\n'
}

umask 077
server_edits=(-e '') context=()
if offers_datasource; then
    global_datasource > "$out/datasource.xml"
    server_edits+=(-e "/<!-- @datasource/r $out/datasource.xml")
    context+=('  <ResourceLink name="jdbc/capbench" global="jdbc/capbench" type="javax.sql.DataSource"/>')
fi
if [ "${NODE_TLS:-0}" = 1 ]; then
    [ -r /run/secrets/node_tls ] || { echo "capbench: NODE_TLS=1 but this node has no certificate at /run/secrets/node_tls" >&2; exit 2; }
    tls_connector > "$out/tls-connector.xml"
    server_edits+=(-e "/<!-- @tls-connector/r $out/tls-connector.xml")
fi
if [ "${NODE_HTTP:-1.1}" = 2 ]; then
    http2_protocol > "$out/http2.xml"
    server_edits+=(-e "/<!-- @http2/r $out/http2.xml")
fi
if [ "$TOMCAT_SESSION_REPLICATION" = 1 ]; then
    address=$(bench_address "$NODE_NAME")
    if [ -z "$address" ]; then
        echo "capbench: $NODE_NAME has no address on the bench network ($bench_prefix*) to replicate sessions on" >&2
        exit 2
    fi
    cluster_xml "$NODE_NAME" "$address" > "$out/cluster.xml"
    server_edits+=(-e "/<!-- @cluster/r $out/cluster.xml")
else
    context+=('  <Manager pathname=""/>')
fi
sed "${server_edits[@]}" "$CATALINA_BASE/conf/server.xml" > "$out/server.xml"
{ echo '<Context>'; for line in "${context[@]}"; do echo "$line"; done; echo '</Context>'; } > "$out/context.xml"
