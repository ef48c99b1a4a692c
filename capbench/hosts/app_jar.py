"""What an executable JAR (APP_JAR) is, read from its manifest before anything starts: the nodes run it with
`java -jar`, so it must name a Main-Class; a Spring Boot JAR (its launcher's manifest names Spring-Boot-Version)
takes the nodes' port and connector settings as its own properties (tomcat-conf/run-jar.sh), any other takes
APP_JAR_ARGS only.

    python3 capbench/hosts/app_jar.py APP.jar    exit 0 and print "spring-boot VERSION" or "main CLASS" for a runnable
                                          JAR; 1 and print why when it is not one; 2 when it cannot be read

The manifest's main section is read as the JAR specification writes it: "Name: value" lines, a line that starts
with a space continuing the one before (a long class name is wrapped at 72 bytes)."""
from __future__ import annotations

import sys
import zipfile

MANIFEST = "META-INF/MANIFEST.MF"


def main_attributes(text: str) -> dict[str, str]:
    """The manifest's main section (up to its first blank line) as {name: value}, continuation lines joined."""
    lines: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            break
        if line.startswith(" ") and lines:
            lines[-1] += line[1:]
        else:
            lines.append(line)
    pairs = (line.split(":", 1) for line in lines if ":" in line)
    return {name.strip(): value.strip() for name, value in pairs}


def kind(path: str) -> tuple[str, str]:
    """("spring-boot", its version) or ("main", the Main-Class); ValueError says why the file is no runnable JAR."""
    with zipfile.ZipFile(path) as jar:
        if MANIFEST not in jar.namelist():
            raise ValueError(f"it has no {MANIFEST}")
        attributes = main_attributes(jar.read(MANIFEST).decode("utf-8", errors="replace"))
    main = attributes.get("Main-Class")
    if not main:
        raise ValueError(f"its {MANIFEST} names no Main-Class, so java -jar cannot start it")
    if attributes.get("Spring-Boot-Version"):
        return "spring-boot", attributes["Spring-Boot-Version"]
    return "main", main


def main(argv: list[str]) -> int:
    try:
        found, detail = kind(argv[1])
    except ValueError as why:
        print(why)
        return 1
    except (OSError, zipfile.BadZipFile) as problem:
        print(f"it cannot be read as a zip ({problem})")
        return 2
    print(found, detail)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
