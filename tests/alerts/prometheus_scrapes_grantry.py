"""A real Prometheus scraping a real grantry, with grantry's alerting rules loaded.

Starts grantry (GRANTRY_BIN, demo provider, SQLite, --max-held-retries 77) and Prometheus
(every second, rules from argv[1]) on free loopback ports, then waits (60 s at most) until
Prometheus reports the target up, every rule of the `grantry` group evaluated with health
`ok`, and the limit the held-retries alert divides by scraped as 77. Prints what it saw."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

RULES = sys.argv[1]
LIMIT = "77"


def free_port() -> int:
    """A port free when picked, and only then: whatever binds it must check it got it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_grantry(work: str):
    """grantry on a port of its own: (process, port). Ready once its own log says it listens
    (the directive added to GRANTRY_LOG lets that line through whatever the level), not once
    something answers on the port; when another process took the port first, grantry exits
    naming the address, and starts again on a new one."""
    level = os.environ.get("GRANTRY_LOG") or os.environ.get("RUST_LOG") or "info,rmcp=warn"
    env = dict(os.environ, GRANTRY_LOG=f"{level},grantry::program[{{max_connections_per_address}}]=info")
    log = os.path.join(work, "grantry.log")
    for _ in range(5):
        port = free_port()
        grantry = subprocess.Popen(
            [os.environ["GRANTRY_BIN"], "--listen", f"127.0.0.1:{port}", "--data-dir", work,
             "--max-held-retries", LIMIT],
            stdout=subprocess.DEVNULL, stderr=open(log, "w"), env=env,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and grantry.poll() is None:
            if "grantry is listening" in open(log).read():
                return grantry, port
            time.sleep(0.05)
        grantry.terminate()
        grantry.wait()
        if "cannot listen on" not in open(log).read():
            break
    sys.exit(f"grantry did not start; its log:\n{open(log).read()}")


def start_prometheus(work: str, config: str):
    """Prometheus on a free port: (process, port). One that lost the port to another process
    exits, and `main` starts it again."""
    port = free_port()
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={work}/tsdb",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"),
    )
    return prometheus, port


def get(url: str):
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.load(answer)["data"]


def main() -> None:
    work = tempfile.mkdtemp(prefix="grantry-alerts-")
    grantry, grantry_port = start_grantry(work)
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: ['{os.path.abspath(RULES)}']\n"
            "scrape_configs:\n"
            f"  - job_name: grantry\n    static_configs: [{{targets: ['127.0.0.1:{grantry_port}']}}]\n"
        )
    prometheus, prometheus_port = start_prometheus(work, config)
    api = f"http://127.0.0.1:{prometheus_port}/api/v1"
    restarts = 0
    # Only our grantry's target counts: whatever answers on Prometheus's port must be scraping
    # it (a Prometheus of another run that took the port would not be).
    ours = f"http://127.0.0.1:{grantry_port}/metrics"
    seen = "nothing yet"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(1)
            if prometheus.poll() is not None:
                log = open(os.path.join(work, "prometheus.log")).read()
                if "address already in use" not in log or restarts == 4:
                    sys.exit(f"Prometheus exited; its log:\n{log}")
                # Its port was taken between picking and binding: again on a new one.
                prometheus, prometheus_port = start_prometheus(work, config)
                api = f"http://127.0.0.1:{prometheus_port}/api/v1"
                restarts += 1
                continue
            try:
                targets = get(f"{api}/targets")["activeTargets"]
                groups = [g for g in get(f"{api}/rules")["groups"] if g["name"] == "grantry"]
                limit = get(f"{api}/query?query=grantry_held_retries_limit")["result"]
            except OSError as e:
                seen = f"Prometheus not answering yet: {e}"
                continue
            health = [t["health"] for t in targets if t.get("scrapeUrl") == ours]
            rules = groups[0]["rules"] if groups else []
            evaluated = {r["name"]: r["health"] for r in rules}
            scraped = [s["value"][1] for s in limit]
            seen = f"targets {health}, rules {evaluated}, limit {scraped}"
            if health == ["up"] and len(rules) == 8 and set(evaluated.values()) == {"ok"} \
                    and scraped == [LIMIT]:
                print(f"Prometheus scraped grantry and evaluated its rules: {seen}")
                return
        sys.exit(f"Prometheus never settled on grantry's rules within 60 s: {seen}")
    finally:
        prometheus.terminate()
        grantry.terminate()


if __name__ == "__main__":
    main()
