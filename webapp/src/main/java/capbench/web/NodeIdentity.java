package capbench.web;

/** The name this node answers with, so a client behind the balancer can tell which node served it. */
final class NodeIdentity {

    private NodeIdentity() {
    }

    /** {@code NODE_NAME} from the environment (set per node by the cluster), else the host name. */
    static String name() {
        String name = System.getenv("NODE_NAME");
        if (name == null || name.isBlank()) {
            name = System.getenv("HOSTNAME");
        }
        return name == null || name.isBlank() ? "unnamed" : name;
    }
}
