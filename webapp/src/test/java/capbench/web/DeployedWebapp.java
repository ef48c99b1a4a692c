package capbench.web;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import jakarta.servlet.Servlet;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.Wrapper;
import org.apache.catalina.startup.Tomcat;

/**
 * The webapp as deployed, for tests: our web.xml in an embedded Tomcat 10.1 on a free loopback port, with no
 * JSP or default servlets (none are deployed on the nodes either).
 */
final class DeployedWebapp {

    private final Tomcat tomcat = new Tomcat();
    private final Context context;

    DeployedWebapp() throws Exception {
        Path work = Files.createTempDirectory("capbench-tomcat");
        tomcat.setBaseDir(work.toString());
        tomcat.setHostname("127.0.0.1");
        tomcat.setPort(0);
        tomcat.getConnector();
        tomcat.setAddDefaultWebXmlToWebapp(false);
        context = tomcat.addWebapp("", new File("src/main/webapp").getAbsolutePath());
        tomcat.start();
    }

    int port() {
        return tomcat.getConnector().getLocalPort();
    }

    /**
     * The instance Tomcat runs for a servlet of our web.xml, by its servlet-name (null until loaded; grind
     * loads at startup). The webapp has no classes of its own, so its class loader finds the test's: a
     * GrindServlet here is of the test's own class.
     */
    Servlet servlet(String name) {
        return ((Wrapper) context.findChild(name)).getServlet();
    }

    void stop() throws LifecycleException {
        tomcat.stop();
        tomcat.destroy();
    }
}
