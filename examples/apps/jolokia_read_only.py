"""jolokia_read_only.py WAR OUT: WAR with a Jolokia policy added that allows only reads, by GET (the version,
reads, searches and listings), at WEB-INF/classes/jolokia-access.xml, where Jolokia looks by default. Without it,
any client of a WAR that carries Jolokia could call every MBean operation (write attributes, run the JVM's
diagnostic commands). examples/apps/hawtio.sh and jolokia.sh use it."""
import shutil
import sys
import zipfile
from pathlib import Path

POLICY = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Added by capbench's examples/apps/jolokia_read_only.py: Jolokia answers reads only, by GET. -->
<restrict>
  <http>
    <method>get</method>
  </http>
  <commands>
    <command>version</command>
    <command>read</command>
    <command>search</command>
    <command>list</command>
  </commands>
</restrict>
"""
source, out = Path(sys.argv[1]), Path(sys.argv[2])
tmp = out.with_name(out.name + ".tmp")
with zipfile.ZipFile(source) as war, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as copy:
    if "WEB-INF/classes/jolokia-access.xml" in war.namelist():
        sys.exit(f"{source}: already has a WEB-INF/classes/jolokia-access.xml")
    for item in war.infolist():
        with war.open(item) as data, copy.open(item, "w") as target:
            shutil.copyfileobj(data, target)
    copy.writestr("WEB-INF/classes/jolokia-access.xml", POLICY)
tmp.replace(out)
