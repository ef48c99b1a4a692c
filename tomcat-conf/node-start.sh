# What a node's start needs whatever it runs, Tomcat (run-tomcat.sh) or an executable JAR (run-jar.sh); sourced.
# Where cluster/provision/node.sh installs a user's executable JAR (APP_JAR) and what it is (capbench/hosts/app_jar.py's
# line: "spring-boot VERSION" or "main CLASS").
APP_JAR_FILE=/opt/capbench/app/app.jar
APP_JAR_KIND_FILE=/opt/capbench/app/kind

# connector_values: the connector's settings as Tomcat applies them. A connector never keeps more spare threads
# than maxThreads (so `TOMCAT_MAX_THREADS=4` alone works), and keepAliveTimeout defaults to connectionTimeout.
connector_values() {
    min_spare_threads=$(( TOMCAT_MIN_SPARE_THREADS < TOMCAT_MAX_THREADS ? TOMCAT_MIN_SPARE_THREADS : TOMCAT_MAX_THREADS ))
    keep_alive_timeout=${TOMCAT_KEEP_ALIVE_TIMEOUT:-$TOMCAT_CONNECTION_TIMEOUT}
}

# node_java_opts: java_opts, the node's JVM options from its heap and GC, then the application's own.
node_java_opts() {
    local gc_options app_java_opts
    case $JVM_GC in
        auto) gc_options=() ;;          # the JVM's ergonomics choose; /info and the GC log say what they chose
        serial) gc_options=(-XX:+UseSerialGC) ;;
        parallel) gc_options=(-XX:+UseParallelGC) ;;
        g1) gc_options=(-XX:+UseG1GC) ;;
        zgc) gc_options=(-XX:+UseZGC) ;;
    esac
    # Fixed heap (Xms = Xmx): no heap resizing during a measurement. ExitOnOutOfMemoryError: a node out of heap
    # stops (and HAProxy takes it out) instead of limping on with errors. The GC log records every collection
    # and, on its first line, the collector in use.
    # shellcheck disable=SC2054  # the commas belong to -Xlog's syntax
    java_opts=(
        "-Xms$JVM_HEAP" "-Xmx$JVM_HEAP" "${gc_options[@]}" -XX:+ExitOnOutOfMemoryError
        -Xlog:gc:file=/var/log/capbench/gc.log:time,uptimemillis,level,tags:filecount=5,filesize=20m
        # JDK Flight Recorder records nothing until the harness starts it (profiling/); its default 64 frames cut
        # Tomcat's stacks short of the servlet's caller.
        -XX:FlightRecorderOptions=stackdepth=256
        # JVM and Tomcat metrics for PCP (metrics/jmx-exporter.yaml), served on loopback only.
        -javaagent:/opt/capbench/lib/jmx_prometheus_javaagent.jar=127.0.0.1:9404:/opt/capbench/lib/jmx-exporter.yaml
    )
    # The user's application's own JVM options (cluster/app.env), last, so one of them may override ours; split
    # at spaces, never globbed.
    read -r -a app_java_opts <<<"${APP_JAVA_OPTS-}"
    java_opts+=("${app_java_opts[@]}")
}
