"""A WAR built for javax.servlet (Java EE 8 and older) is told from a jakarta one (capbench/hosts/javax_war.py) and
converted before it is staged (cluster/app.sh prepare: Tomcat's migration tool, APP_MIGRATE=auto), or refused
with why (off); a jakarta WAR is staged as it is."""
from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import zipfile

import pytest

from capbench.hosts import cluster_settings
from conftest import ROOT, run

DETECT = [sys.executable, str(ROOT / "capbench" / "hosts" / "javax_war.py")]
PREPARE = ["bash", str(ROOT / "cluster" / "app.sh"), "prepare"]
JAVA_EE_4 = ('<web-app xmlns="http://xmlns.jcp.org/xml/ns/javaee" version="4.0"><filter><filter-name>f</filter-name>'
             '<filter-class>shop.Filter</filter-class><init-param><param-name>dispatch</param-name>'
             '<param-value>javax.servlet.DispatcherType</param-value></init-param></filter></web-app>')
JAKARTA_6 = '<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0"/>'


def jar_bytes(entries: dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return data.getvalue()


def war(path, entries: dict[str, bytes | str]):
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return str(path)


def detect(path) -> subprocess.CompletedProcess:
    return subprocess.run([*DETECT, path], capture_output=True, text=True, check=False)


@pytest.mark.parametrize(("entries", "why"), [
    ({"WEB-INF/web.xml": JAVA_EE_4}, "WEB-INF/web.xml is a Java EE descriptor (http://xmlns.jcp.org/xml/ns/javaee)"),
    ({"WEB-INF/classes/shop/Cart.class": b"\xca\xfe\xba\xbe..javax/servlet/http/HttpServlet.."},
     "WEB-INF/classes/shop/Cart.class names javax.servlet"),
    # Annotations only, its servlets in a library of its own.
    ({"WEB-INF/lib/shop.jar": jar_bytes({"shop/Cart.class": b"..javax/servlet/Servlet.."})},
     "WEB-INF/lib/shop.jar (shop/Cart.class) names javax.servlet"),
])
def test_a_javax_war_is_found_by_its_descriptor_or_its_classes(tmp_path, entries, why):
    done = detect(war(tmp_path / "shop.war", entries))
    assert (done.returncode, done.stdout.strip()) == (0, why)


@pytest.mark.parametrize("entries", [
    {"WEB-INF/web.xml": JAKARTA_6, "WEB-INF/lib/old.jar": jar_bytes({"a/B.class": b"..javax/servlet/Servlet.."})},
    {"WEB-INF/classes/shop/Cart.class": b"..jakarta/servlet/http/HttpServlet.."},
    # A library that runs on either names both: it decides nothing.
    {"WEB-INF/lib/both.jar": jar_bytes({"a/B.class": b"..javax/servlet/..jakarta/servlet/.."})},
    {"index.html": "hello"},
])
def test_a_jakarta_war_or_one_that_names_no_servlet_api_is_not(tmp_path, entries):
    done = detect(war(tmp_path / "shop.war", entries))
    assert (done.returncode, done.stdout) == (1, "")


def test_a_file_that_is_not_a_zip_cannot_be_read(tmp_path):
    (tmp_path / "x.war").write_text("not a zip")
    assert detect(str(tmp_path / "x.war")).returncode == 2


def test_a_javax_war_is_converted_by_tomcats_tool_and_a_jakarta_one_copied(tmp_path):
    javax = war(tmp_path / "shop.war", {"WEB-INF/web.xml": JAVA_EE_4, "index.html": "hello"})
    done = run([*PREPARE, javax, str(tmp_path / "out.war")], env={"APP_MIGRATE": "auto"}, timeout=120)
    with zipfile.ZipFile(tmp_path / "out.war") as converted:
        descriptor = converted.read("WEB-INF/web.xml").decode()
    assert "jakarta.servlet.DispatcherType" in descriptor and "javax.servlet" not in descriptor
    sha = hashlib.sha256((tmp_path / "out.war").read_bytes()).hexdigest()
    assert (tmp_path / "out.war.migrated").read_text().strip() == sha
    assert "is built for javax.servlet (WEB-INF/web.xml is a Java EE descriptor" in done.stderr
    assert "converted to jakarta.servlet by Tomcat's migration tool" in done.stderr
    jakarta = war(tmp_path / "new.war", {"WEB-INF/web.xml": JAKARTA_6})
    run([*PREPARE, jakarta, str(tmp_path / "copy.war")], env={"APP_MIGRATE": "auto"})
    assert (tmp_path / "copy.war").read_bytes() == (tmp_path / "new.war").read_bytes()
    assert not (tmp_path / "copy.war.migrated").exists()


def test_a_javax_war_is_refused_with_why_when_migration_is_off(tmp_path):
    javax = war(tmp_path / "shop.war", {"WEB-INF/web.xml": JAVA_EE_4})
    done = run([*PREPARE, javax, str(tmp_path / "out.war")], env={"APP_MIGRATE": "off"}, check=False)
    assert done.returncode == 2 and not (tmp_path / "out.war").exists()
    assert done.stderr.strip() == (
        f"capbench: APP_WAR='{javax}' is built for javax.servlet (WEB-INF/web.xml is a Java EE descriptor "
        "(http://xmlns.jcp.org/xml/ns/javaee)), which Tomcat 10.1 cannot run; APP_MIGRATE=auto converts it to "
        "jakarta.servlet at make up (now APP_MIGRATE=off)")


def test_run_json_names_the_converted_war_beside_the_users_only_for_the_war_staged(tmp_path, monkeypatch):
    """capbench/hosts/cluster_settings.with_application: APP_SHA256 is the user's file; APP_MIGRATED_SHA256 what the nodes
    ran, read from what stage left, only while the staged file came from that same WAR."""
    javax = war(tmp_path / "shop.war", {"WEB-INF/web.xml": JAVA_EE_4})
    sha = hashlib.sha256((tmp_path / "shop.war").read_bytes()).hexdigest()
    staged = tmp_path / "staged"
    staged.mkdir()
    monkeypatch.setattr(cluster_settings, "STAGED_APP", staged)
    assert cluster_settings.with_application({"APP_WAR": javax}) == {"APP_WAR": javax, "APP_SHA256": sha}
    (staged / "source").write_text(f"{sha} APP_MIGRATE=auto\n")
    (staged / "migrated").write_text("c" * 64 + "\n")
    assert cluster_settings.with_application({"APP_WAR": javax}) == {"APP_WAR": javax, "APP_SHA256": sha,
                                                                     "APP_MIGRATED_SHA256": "c" * 64}
    (staged / "source").write_text(f"{'d' * 64} APP_MIGRATE=auto\n")  # another WAR's staging
    assert "APP_MIGRATED_SHA256" not in cluster_settings.with_application({"APP_WAR": javax})
    assert cluster_settings.with_application({"APP_WAR": ""}) == {"APP_WAR": ""}
