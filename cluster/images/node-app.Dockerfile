# A node with a user's application (APP_WAR): the node image, with the WAR staged by cluster/app.sh deployed
# beside the Grinder by the same provisioning step a VM runs (cluster/provision/node.sh app). Built by
# cluster/app.sh only when the WAR, its context or the node image changed.
# Build context: .capbench/app (app.war, context, sha256), nothing else.
FROM capbench-node:latest
USER root
COPY app.war context sha256 /opt/capbench/src/.capbench/app/
RUN /opt/capbench/src/cluster/provision/node.sh app /opt/capbench/src
USER tomcat
