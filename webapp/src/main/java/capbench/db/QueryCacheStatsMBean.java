package capbench.db;

/** What PCP logs of the node's query cache (metrics/jmx-exporter.yaml: capbench:type=QueryCache). */
public interface QueryCacheStatsMBean {

    long getHits();

    long getMisses();

    long getEntries();

    int getMaximumSize();
}
