"""The benchmark's parts: the build, the servers it starts (pinned, cold start measured),
fresh stores, MCP requests, and wrk."""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("GRANTRY_CACHE_DIR", os.path.expanduser("~/.cache/grantry"))
TARGET_DIR = os.environ.get("CARGO_TARGET_DIR", os.path.join(CACHE, "target"))
SERVER_CORE, LOAD_CORE = "0", "1"
VERSION = "2026-07-28"
# A fixed sealing key for grantry (the browser driver seals connect links with it too).
KEY = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"
UNLIMITED = "1000000000"


PROFILE = "release"


def build(debug):
    global PROFILE
    PROFILE = "debug" if debug else "release"
    env = dict(os.environ, CARGO_TARGET_DIR=TARGET_DIR)
    subprocess.run(
        ["cargo", "build", "--quiet", "--bin", "grantry"] + ([] if debug else ["--release"]) + [
         "--example", "bare_axum", "--example", "floor", "--example", "browser_rounds", "--example", "seed_grants",
         "--example", "held_retries", "--example", "demo_flood", "--example", "keepalive_scan"],
        cwd=ROOT, env=env, check=True)


def binary(name, example=False):
    return os.path.join(TARGET_DIR, PROFILE, "examples" if example else "", name)


def python_venv():
    """The pinned Python SDK in a virtualenv kept in the cache directory."""
    reqs = os.path.join(ROOT, "bench", "python", "requirements.txt")
    stamp = hashlib.sha256(open(reqs, "rb").read()).hexdigest()[:16]
    venv = os.path.join(CACHE, f"bench-venv-{stamp}")
    if not os.path.exists(os.path.join(venv, "bin", "uvicorn")):
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet",
                        "--disable-pip-version-check", "-r", reqs], check=True)
    return os.path.join(venv, "bin", "python")


def typescript_peer():
    """The pinned TypeScript SDK and the Node it runs on, installed from npm into the cache
    directory: (node, seed script)."""
    here = os.path.join(ROOT, "bench", "typescript")
    files = ("package.json", "package-lock.json")
    stamp = hashlib.sha256(b"".join(open(os.path.join(here, f), "rb").read()
                                    for f in files)).hexdigest()[:16]
    peer = os.path.join(CACHE, f"bench-typescript-{stamp}")
    node = os.path.join(peer, "node_modules", ".bin", "node")
    if not os.path.exists(node):
        shutil.rmtree(peer, ignore_errors=True)
        os.makedirs(peer)
        for f in files:
            shutil.copy(os.path.join(here, f), peer)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=peer, check=True)
    # The script resolves the SDK from its own location: it runs from the installed tree.
    seed = os.path.join(peer, "seed_billing.mjs")
    shutil.copy(os.path.join(here, "seed_billing.mjs"), seed)
    return node, seed


def free_port():
    """A port free when picked, and only then: whatever binds it must check it got it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listens(pid, port):
    """Whether process `pid` holds the socket listening on loopback `port` (not merely whether
    something answers there)."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()  # sl, local address, remote address, state, ..., inode
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    sockets.add(f"socket:[{fields[9]}]")
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") in sockets
                   for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False  # it exited


class Server:
    """A process pinned to a core (the server's unless told), with its cold start measured."""

    ATTEMPTS = 5

    def __init__(self, name, argv, env=None, log=None, ready_path=None, core=SERVER_CORE):
        self.name = name
        # A free port is free only when picked: a server that lost it to another process exits
        # at start, and is started again on a new one (the cold start is that of the attempt
        # that got its port). Ready once the process started holds the port and answers.
        for _ in range(self.ATTEMPTS):
            self.port = free_port()
            self.base = f"http://127.0.0.1:{self.port}"
            args = [a.replace("{port}", str(self.port)) for a in argv]
            self.log = open(log or os.devnull, "wb")
            started = time.perf_counter()
            self.proc = subprocess.Popen(["taskset", "-c", core] + args,
                                         env=dict(os.environ, **(env or {})),
                                         stdout=self.log, stderr=subprocess.STDOUT)
            self.cold_start_ms = (self.wait_for_path(ready_path, started) if ready_path
                                  else self.wait_for_discover(started))
            if self.cold_start_ms is not None:
                return
            self.log.close()
        raise SystemExit(f"bench: {self.name} exited at start {self.ATTEMPTS} times "
                         f"(code {self.proc.returncode})")

    def answered(self, started):
        """The cold start in ms once the server answered, if the answer was its own."""
        elapsed = (time.perf_counter() - started) * 1000
        return elapsed if listens(self.proc.pid, self.port) else None

    def wait_for_discover(self, started):
        """The cold start: the first 200 to server/discover (None: the process exited)."""
        body = json.dumps(message("server/discover", {})).encode()
        deadline = started + 60
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                return None
            try:
                status, _ = post(self.base, body, headers("server/discover"), timeout=1)
                if status == 200 and (elapsed := self.answered(started)) is not None:
                    return elapsed
            except OSError:
                pass
            time.sleep(0.002)
        raise SystemExit(f"bench: {self.name} did not answer server/discover within 60 s")

    def wait_for_path(self, path, started):
        """For a server without MCP (the floor): the first 200 on `GET path` (None: the
        process exited)."""
        deadline = started + 60
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                return None
            try:
                with urllib.request.urlopen(self.base + path, timeout=1) as response:
                    if response.status == 200 and (elapsed := self.answered(started)) is not None:
                        return elapsed
            except OSError:
                pass
            time.sleep(0.002)
        raise SystemExit(f"bench: {self.name} did not answer GET {path} within 60 s")

    def cpu_seconds(self):
        """CPU time used so far by the process, all its threads, user and system."""
        with open(f"/proc/{self.proc.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self):
        """(current, peak) resident memory in MiB."""
        fields = {}
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
        return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


ELICITATION = {"elicitation": {"form": {}, "url": {}}}


def message(method, params, capabilities=ELICITATION):
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "grantry-bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def headers(method, tool=None):
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if tool:
        h["Mcp-Name"] = tool
    return h


def post(base, body, hdrs, timeout=10, path="/mcp"):
    request = urllib.request.Request(base + path, data=body, headers=hdrs, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


RUN_ID = uuid.uuid4().hex[:8]
CREATED_DATABASES, CREATED_PREFIXES = [], []


TOPOLOGIES = {}


def redis_topology(store, work):
    """The URL of the Redis Sentinel or Cluster (`store` redis-sentinel, redis-cluster) this run
    started with tests/servers/redis-topologies (one replica per primary, durable nodes)."""
    if not TOPOLOGIES:
        directory = os.path.join(work, "redis-topologies")
        out = subprocess.run([os.path.join(ROOT, "tests", "servers", "redis-topologies"),
                              "start", directory, "both", "1"],
                             check=True, capture_output=True, text=True).stdout
        TOPOLOGIES["dir"] = directory
        for line in out.splitlines():
            name, _, url = line.partition("=")
            TOPOLOGIES[name.removeprefix("GRANTRY_TEST_REDIS_").lower()] = url
    return TOPOLOGIES[store.removeprefix("redis-")]


def fresh_store(store, work, label="main"):
    """A new, empty store of kind `store`: (store URL or None for SQLite, Redis prefix)."""
    if store == "sqlite":
        return None, None
    if store in ("redis-sentinel", "redis-cluster"):
        return redis_topology(store, work), f"grantry-bench-{RUN_ID}-{label}:"
    if store == "postgres":
        db = f"grantry_bench_{RUN_ID}_{label}"
        psql(f"CREATE DATABASE {db}")
        CREATED_DATABASES.append(db)
        return f"postgres://postgres@127.0.0.1:5432/{db}", None
    prefix = f"grantry-bench-{RUN_ID}-{label}:"
    CREATED_PREFIXES.append(prefix)
    return "redis://127.0.0.1:6379/", prefix


def psql(sql):
    subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres",
                    "-c", sql], check=True, stdout=subprocess.DEVNULL)


def cleanup_stores():
    if TOPOLOGIES:
        subprocess.run([os.path.join(ROOT, "tests", "servers", "redis-topologies"), "stop",
                        TOPOLOGIES["dir"]], stdout=subprocess.DEVNULL)
    for prefix in CREATED_PREFIXES:
        keys = subprocess.run(["redis-cli", "-h", "127.0.0.1", "--scan",
                               "--pattern", prefix + "*"],
                              capture_output=True, text=True).stdout.split()
        for i in range(0, len(keys), 5000):
            subprocess.run(["redis-cli", "-h", "127.0.0.1", "UNLINK"] + keys[i:i + 5000],
                           stdout=subprocess.DEVNULL)
    for db in CREATED_DATABASES:
        psql(f"DROP DATABASE IF EXISTS {db}")


def grantry(store, work, in_process=False, where=(None, None), label="main", extra=(),
            public_url=None, env=None, program=None):
    """grantry on `store` (`where` is its URL and Redis prefix from `fresh_store`). An instance
    sharing another's store shares its public URL too: the demo's tokens are sealed for it."""
    url, prefix = where
    data_dir = os.path.join(work, f"data-{store}-{label}")
    os.makedirs(data_dir, exist_ok=True)
    argv = [program or binary("grantry"), "serve", "--listen", "127.0.0.1:{port}", "--data-dir", data_dir,
            "--rate-mcp-principal", UNLIMITED, "--rate-mcp-ip", UNLIMITED,
            "--rate-browser-ip", UNLIMITED, "--rate-demo-ip", UNLIMITED,
            "--max-pending-flows", UNLIMITED, "--max-connections-per-address", UNLIMITED,
            "--request-state-ttl", "86400", *extra]
    if url:
        argv += ["--store", url]
    if prefix:
        argv += ["--store-prefix", prefix, "--allow-volatile-store", "true"]
    if in_process:
        argv += ["--demo-api-in-process", "true"]
    if public_url:
        argv += ["--public-url", public_url]
    name = f"grantry-{store}" + ("" if label == "main" else f"-{label}") + \
        ("-inproc" if in_process else "")
    return Server(name, argv, env={"GRANTRY_KEYS": KEY, **(env or {})},
                  log=os.path.join(work, f"{name}.log"))




def sign_in(server):
    """Connects the demo account of the `dev` user, as a person would in the browser."""
    subprocess.run([binary("browser_rounds", example=True), server.base, "1", "0"],
                   env=dict(os.environ, GRANTRY_KEYS=KEY), check=True)




def check_answer(target, scenario, server, body_path, hdr_path, path="/mcp"):
    """One request first: the load must measure the intended path, not an error."""
    hdrs = dict(line.split(": ", 1) for line in open(hdr_path).read().splitlines())
    status, raw = post(server.base, open(body_path, "rb").read(), hdrs, path=path)
    answer = json.loads(raw)
    want = "input_required" if scenario == "input_required" else "complete"
    result = answer.get("result", {})
    if status != 200 or (scenario not in ("discover", "tools_list") and target != "axum"
                         and result.get("resultType") != want):
        raise SystemExit(f"bench: {target} {scenario} answered {status}: {raw[:300]!r}")
    if scenario.startswith("grant") and target.startswith(("grantry", "floor")):
        assert result["structuredContent"]["invoices"], raw


def wrk(server, body_path, hdr_path, connections, seconds, path="/mcp"):
    env = dict(os.environ, BENCH_BODY=body_path, BENCH_HEADERS=hdr_path, BENCH_PATH=path)
    out = subprocess.run(
        ["taskset", "-c", LOAD_CORE, "wrk", "-t1", f"-c{connections}", f"-d{seconds}s",
         "--timeout", "10s", "-s", os.path.join(ROOT, "bench", "wrk", "mcp.lua"), server.base],
        env=env, capture_output=True, text=True, check=True).stdout
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])




def floor(store, work, where):
    """The floor server (bench/floor.rs) on a store of its own of kind `store`."""
    url, prefix = where
    if url is None:
        url = "sqlite://" + os.path.join(work, "floor", "grantry.db")
        os.makedirs(os.path.dirname(url.removeprefix("sqlite://")), exist_ok=True)
    name = f"floor-{store}"
    return Server(name, [binary("floor", example=True), url, prefix or "grantry:",
                         "127.0.0.1:{port}"],
                  env={"GRANTRY_KEYS": KEY}, log=os.path.join(work, f"{name}.log"),
                  ready_path="/healthz")
