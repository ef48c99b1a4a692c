package capbench.db;

import java.lang.management.ManagementFactory;
import java.util.logging.Logger;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/** The query cache's counters as an MBean (capbench:type=QueryCache), where the JMX exporter finds them. */
public final class QueryCacheStats implements QueryCacheStatsMBean {

    private static final String NAME = "capbench:type=QueryCache";
    private final QueryCache cache;

    private QueryCacheStats(QueryCache cache) {
        this.cache = cache;
    }

    /** Registers the cache's counters; a name already taken (a redeployment) is replaced. */
    public static void register(QueryCache cache) {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(NAME);
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(new QueryCacheStats(cache), name);
        } catch (JMException e) {
            Logger.getLogger(QueryCacheStats.class.getName()).warning("query cache counters not in JMX: " + e);
        }
    }

    public static void unregister() {
        try {
            ObjectName name = new ObjectName(NAME);
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
        } catch (JMException e) {
            Logger.getLogger(QueryCacheStats.class.getName()).warning("query cache counters left in JMX: " + e);
        }
    }

    @Override
    public long getHits() {
        return cache.hits();
    }

    @Override
    public long getMisses() {
        return cache.misses();
    }

    @Override
    public long getEntries() {
        return cache.entries();
    }

    @Override
    public int getMaximumSize() {
        return cache.maximumSize();
    }
}
