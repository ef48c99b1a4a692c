"""The images reach the swarm's machines without a public registry. By default `docker save | docker load` straight
into each machine's engine, only the images its roles run and only when its copy differs (the image ID, which a
save and load keep): nothing to run or secure beyond the engines the harness already reaches, and it works for a
lab of nested engines as for machines over SSH. With IMAGE_REGISTRY=host:port (a registry the user runs, such as
Debian's docker-registry 2.8.2 with TLS, or one every engine trusts) the images are pushed there instead and the
stack names them by it, so each machine pulls what it runs.

Without a registry the stack names each image by its ID (by_id): Swarm's agent tries to pull a task's image
before it starts the task, whatever the machine holds, unless the image is named by ID, and with no registry to
answer it first waits out the failed attempt (docs/findings.md has what the lab measured)."""
from __future__ import annotations

import os
import subprocess
import time

from capbench.hosts.backend import ClusterError
from capbench.hosts.swarm_hosts import SwarmHosts

IMAGE_LABEL = "capbench.image"  # the image's name on a service whose image is named by ID


def registry() -> str:
    return os.environ.get("IMAGE_REGISTRY", "").strip()


def _image_id(image: str, engine: str | None = None) -> str:
    host = ["--host", engine] if engine else []
    done = subprocess.run(["docker", *host, "image", "inspect", "--format", "{{.Id}}", image], capture_output=True,
                          text=True, timeout=60)
    return done.stdout.strip() if done.returncode == 0 else ""


def distribute(hosts: SwarmHosts, rendered: dict, registry: str = "") -> None:
    if registry:
        push(rendered, registry)
        return
    for machine in hosts.machines:
        for image in sorted({rendered["services"][role]["image"] for role in machine.roles}):
            local = _image_id(image)
            if not local:
                raise ClusterError(f"image {image} is not built on this machine: run make images")
            if _image_id(image, machine.engine) == local:
                continue
            started = time.monotonic()
            print(f"capbench: sending {image} to {machine.name}", flush=True)
            send(image, machine.engine)
            print(f"capbench: {image} on {machine.name} in {time.monotonic() - started:.0f} s", flush=True)


def by_id(rendered: dict, registry: str = "") -> dict:
    """The stack with each service's image named by its ID, the same on every machine after distribute (a save
    and load keep it); the name stays in the service's label capbench.image. With a registry, unchanged."""
    if registry:
        return rendered
    ids = {image: _image_id(image) for image in {service["image"] for service in rendered["services"].values()}}
    services = {}
    for name, service in rendered["services"].items():
        image_id = ids[service["image"]]
        if not image_id:
            raise ClusterError(f"image {service['image']} is not built on this machine: run make images")
        deploy = {**service.get("deploy", {}),
                  "labels": {**service.get("deploy", {}).get("labels", {}), IMAGE_LABEL: service["image"]}}
        services[name] = {**service, "image": image_id, "deploy": deploy}
    return {**rendered, "services": services}


def send(image: str, engine: str) -> None:
    save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
    load = subprocess.run(["docker", "--host", engine, "load", "--quiet"], stdin=save.stdout, capture_output=True,
                          timeout=900)
    save.stdout.close()
    if save.wait(timeout=60) != 0 or load.returncode != 0:
        raise ClusterError(f"sending {image} to {engine} failed: {load.stderr.decode(errors='replace')[-300:]}")


def push(rendered: dict, registry: str) -> None:
    """Tags each image of the stack (already named registry/image by capbench/hosts/stack.py) and pushes it."""
    for named in sorted({service["image"] for service in rendered["services"].values()}):
        local = named.removeprefix(f"{registry.rstrip('/')}/")
        for argv in (["docker", "tag", local, named], ["docker", "push", "--quiet", named]):
            done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
            if done.returncode != 0:
                raise ClusterError(f"{' '.join(argv[:2])} {named}: {done.stderr.strip()[-300:]}")
