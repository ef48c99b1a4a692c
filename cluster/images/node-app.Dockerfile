# A node with a user's application: the node image, with the WAR staged by cluster/app.sh deployed beside the
# Grinder (APP_WAR), or the executable JAR installed to run in Tomcat's place (APP_JAR), by the same provisioning
# step a VM runs (cluster/provision/node.sh app). Built by cluster/app.sh only when the application, its context or
# the node image changed.
# Build context: .capbench/app (app.war and context, or app.jar and kind; sha256), nothing else.
FROM capbench-node:latest
USER root
COPY . /opt/capbench/src/.capbench/app/
RUN /opt/capbench/src/cluster/provision/node.sh app /opt/capbench/src
USER tomcat
