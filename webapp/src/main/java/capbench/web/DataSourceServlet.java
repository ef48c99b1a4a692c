package capbench.web;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * {@code GET /datasource}: whether Tomcat offers this node's web applications the shared database as the JNDI
 * DataSource {@code java:comp/env/jdbc/capbench}, and what a connection borrowed from it answers (the database's
 * version). Tomcat offers it when a user's application is deployed (tomcat-conf/render-config.sh), to every
 * context alike, this one included: so the harness can see that the application's way to the database works.
 * The Grinder's own /query keeps its own pool.
 */
public class DataSourceServlet extends HttpServlet {

    static final String NAME = "java:comp/env/jdbc/capbench";

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        DataSource source;
        try {
            source = (DataSource) new InitialContext().lookup(NAME);
        } catch (NamingException notOffered) {
            Responses.json(resp, new Json().put("name", NAME).put("offered", false));
            return;
        }
        try (Connection connection = source.getConnection();
             Statement statement = connection.createStatement();
             ResultSet answer = statement.executeQuery("select version()")) {
            answer.next();
            Responses.json(resp, new Json().put("name", NAME).put("offered", true)
                    .put("database", answer.getString(1)));
        } catch (SQLException failed) {
            Responses.unavailable(resp, 1, NAME + " is offered but a connection failed: " + failed.getMessage());
        }
    }
}
