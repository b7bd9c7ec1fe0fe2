"""`bench/run --tasks N`: what open MCP tasks cost. On each store, N `list_invoices` calls from
a client declaring the Tasks extension (none connected, so each becomes a task waiting for a
sign-in); the store's bytes and grantry's RSS before and after, per task; then `tasks/get`
of one of them against `tools/list` (grantry's cheapest answer, from memory) in alternating
rounds of the same run."""

import http.client
import json
import os
import sqlite3
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

from harness import ELICITATION, fresh_store, grantry, headers, message, wrk
from modes import store_bytes

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
CAPABILITIES = {**ELICITATION, "extensions": {TASKS_EXTENSION: {}}}


def tasks(args, work, servers):
    for store in args.stores:
        where = fresh_store(store, work, "tasks")
        server = grantry(store, work, False, where, "tasks")
        servers.append(server)
        ids = create(server, 1)  # the first call's one-off work (the schema, the pools) first
        rss_before, bytes_before = server.rss_mib()[0], stored_bytes(store, where, work)
        ids += create(server, args.tasks)
        rss_after, bytes_after = server.rss_mib()[0], stored_bytes(store, where, work)
        count = args.tasks
        print(f"{store}: {count} open tasks: {(bytes_after - bytes_before) / count:.0f} store bytes "
              f"per task ({bytes_before / 2**20:.1f} → {bytes_after / 2**20:.1f} MiB), grantry's "
              f"RSS {rss_before:.1f} → {rss_after:.1f} MiB "
              f"({(rss_after - rss_before) * 2**20 / count:.0f} bytes per task)", flush=True)
        compare(args, server, work, store, ids[len(ids) // 2])


def create(server, count, workers=8):
    """`count` tasks, made over `workers` keep-alive connections: their ids."""
    body = json.dumps(message("tools/call", {"name": "list_invoices", "arguments": {}}, CAPABILITIES))
    hdrs = headers("tools/call", "list_invoices")
    address = urlparse(server.base)

    def make(n):
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        made = []
        for _ in range(n):
            connection.request("POST", "/mcp", body, hdrs)
            response = connection.getresponse()
            raw = response.read()
            result = json.loads(raw).get("result", {}) if response.status == 200 else {}
            if result.get("resultType") != "task":
                sys.exit(f"bench: a call did not become a task: HTTP {response.status} {raw[:300]!r}")
            made.append(result["taskId"])
        connection.close()
        return made

    shares = [count // workers + (1 if i < count % workers else 0) for i in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        return [task for made in pool.map(make, [s for s in shares if s]) for task in made]


def stored_bytes(store, where, work):
    """As `store_bytes`, and for SQLite the database's pages as a reader sees them (its
    write-ahead log included, not the log's own growth)."""
    if store != "sqlite":
        return store_bytes(store, where)
    path = os.path.join(work, f"data-{store}-tasks", "grantry.db")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        return pages * db.execute("PRAGMA page_size").fetchone()[0]


def compare(args, server, work, store, task_id):
    """`tasks/get` of one task against `tools/list`, alternating, medians of the rounds."""
    requests = {}
    for name, method, params, routed in (
            ("tasks/get", "tasks/get", {"taskId": task_id}, task_id),
            ("tools/list", "tools/list", {}, None)):
        body = os.path.join(work, f"tasks-{store}-{method.replace('/', '-')}.json")
        json.dump(message(method, params, CAPABILITIES), open(body, "w"))
        hdr = body + ".headers"
        open(hdr, "w").write("".join(f"{k}: {v}\n" for k, v in headers(method, routed).items()))
        requests[name] = (body, hdr)
    connections = args.connections[-1]
    runs = {name: [] for name in requests}
    for _ in range(args.rounds):
        for name, (body, hdr) in requests.items():
            run = wrk(server, body, hdr, connections, args.seconds)
            if run["status_errors"] or run["socket_errors"]:
                sys.exit(f"bench: {name} answered with errors: {run}")
            runs[name].append(run["requests"] / (run["duration_us"] / 1e6))
    get, listed = (statistics.median(runs[n]) for n in ("tasks/get", "tools/list"))
    print(f"{store}: tasks/get {get:.0f}/s, tools/list {listed:.0f}/s, ratio {get / listed:.2f} "
          f"({connections} connections, median of {args.rounds} rounds)", flush=True)
