"""The other runs: a million grants against a thousand (`--scale`), many retries held at once
(`--held`), traces on and off (`--traces`), and more (see bench/run)."""

import json
import os
import statistics
import subprocess
import sys
import time

from harness import (KEY, LOAD_CORE, Server, binary, check_answer, fresh_store, grantry,
                     headers, message, sign_in, wrk)
from scenarios import browser

def scale(args, work, servers):
    """The grant-present round with 1 000 grants stored and with `args.scale`, side by side
    (two stores of each kind, measured in alternating rounds)."""
    connections = args.connections[-1]
    rows = []
    for store in [s for s in args.stores if s != "sqlite"]:
        instances = {}
        for label, count in (("1k", 1000), (f"{args.scale // 1000}k", args.scale)):
            where = fresh_store(store, work, label)
            seeded = subprocess.run(
                [binary("seed_grants", example=True), where[0], where[1] or "grantry:", "0",
                 "1000"], env=dict(os.environ, GRANTRY_KEYS=KEY), check=True,
                capture_output=True, text=True).stdout.strip()
            started = time.perf_counter()
            if count > 1000:
                bulk_copy_grants(store, where, count)
            print(f"  {store} {label}: 1000 grants through grantry {seeded}, then copies up to "
                  f"{count} in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            plain = grantry(store, work, False, where, label)
            servers.append(plain)
            sign_in(plain)
            inproc = grantry(store, work, True, where, label, public_url=plain.base)
            servers.append(inproc)
            instances[(label, False)], instances[(label, True)] = plain, inproc
        body, hdr = list_invoices_request(work, f"scale-{store}")
        runs = {key: [] for key in instances}
        for key, server in instances.items():
            check_answer(server.name, "grant_http", server, body, hdr)
            wrk(server, body, hdr, connections, 1)
        for _ in range(args.rounds):
            for key, server in instances.items():
                run = wrk(server, body, hdr, connections, args.seconds)
                run["rps"] = run["requests"] / (run["duration_us"] / 1e6)
                runs[key].append(run)
                print(f"  {server.name:28} {run['rps']:>9.0f}/s p99 {run['p99_us'] / 1000:.2f} ms",
                      file=sys.stderr, flush=True)
        for in_process in (False, True):
            small, large = (statistics.median(r["rps"] for r in runs[(label, in_process)])
                            for label in ("1k", f"{args.scale // 1000}k"))
            rows.append((store, "in-process" if in_process else "demo API over HTTP",
                         small, large, 100 * (large - small) / small))
    print(f"\ngrant-present round, {connections} connections, 1 000 vs {args.scale} grants "
          "stored (median of rounds):")
    for store, upstream, small, large, change in rows:
        print(f"  {store:8} {upstream:20} {small:9.0f}/s  {large:9.0f}/s  {change:+.1f} %")


def bulk_copy_grants(store, where, count):
    """Grows a store to `count` grants by copying the first seeded row under new users' names,
    in bulk (a million writes through the grant API would take longer than the benchmark).
    The copies' sealed tokens are bound to the original row and would not open, but no
    measured request reads them: they are there to fill the table and its index, or the
    keyspace, as a million users' grants would."""
    url, prefix = where
    if store == "postgres":
        db = url.rsplit("/", 1)[1]
        sql = ("INSERT INTO grants (principal_iss, principal_sub, provider, tokens_sealed, "
               "access_expires_at, scopes, version, created_at, updated_at, key_id) "
               "SELECT principal_iss, 'bench-user-' || lpad(g::text, 8, '0'), provider, "
               "tokens_sealed, access_expires_at, scopes, version, created_at, updated_at, key_id "
               f"FROM grants, generate_series(1000, {count - 1}) g "
               "WHERE principal_sub = 'bench-user-00000000'; ANALYZE grants;")
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-c", sql],
                       check=True, stdout=subprocess.DEVNULL)
        return
    template_key = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "--scan", "--pattern", prefix + "grant:*"],
        capture_output=True, text=True, check=True).stdout.split()[0]
    raw = subprocess.run(["redis-cli", "-h", "127.0.0.1", "--raw", "HGETALL", template_key],
                         capture_output=True, check=True, text=True).stdout.split("\n")
    pairs = [x for x in raw if x != ""]
    assert pairs and len(pairs) % 2 == 0, "the template grant reads back"

    def resp(*parts):
        out = [f"*{len(parts)}\r\n".encode()]
        for p in parts:
            b = p.encode() if isinstance(p, str) else p
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    body = b"".join(resp("HSET", f"{prefix}grant:{{bench-{i:08}}}", *pairs)
                    for i in range(1000, count))
    subprocess.run(["redis-cli", "-h", "127.0.0.1", "--pipe"], input=body, check=True,
                   stdout=subprocess.DEVNULL)


def held(args, work, servers):
    """`args.held` retries held at once on each store while one sign-in is pending."""
    for store in args.stores:
        where = fresh_store(store, work, "held")
        server = grantry(store, work, False, where, "held",
                         extra=("--max-held-retries", str(args.held),
                                "--max-held-retries-per-principal", str(args.held),
                                "--retry-hold", "300",
                                "--max-connections", str(args.held + 1024)))
        servers.append(server)
        out = subprocess.run(
            ["taskset", "-c", LOAD_CORE, binary("held_retries", example=True), server.base,
             str(server.proc.pid), str(args.held)],
            env=dict(os.environ, GRANTRY_KEYS=KEY), check=True, capture_output=True,
            text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        print(f"{store}: {json.dumps(result)}")
        server.stop()




def demo_flood(args, work, servers):
    """The demo provider flooded with invoices under many names (its client secret is public):
    the server's memory as the flood goes on, which must level off at the demo's caps."""
    users, per_user = args.demo_flood
    where = fresh_store("sqlite", work, "flood")
    server = grantry("sqlite", work, False, where, "flood")
    servers.append(server)
    out = subprocess.run(
        ["taskset", "-c", LOAD_CORE, binary("demo_flood", example=True), server.base,
         str(server.proc.pid), str(users), str(per_user)],
        check=True, capture_output=True, text=True).stdout
    for line in out.strip().splitlines():
        print(line)
    server.stop()


# A fixed Standard Webhooks secret for the outbox run's endpoint (bench only).
WEBHOOK_SECRET = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="


def outbox(args, work, servers):
    """Whole sign-ins per second with the outbox on (one webhook endpoint: each callback writes
    `connection.created` in the grant's transaction, and a deliverer posts it) against the same
    build with no endpoint (no event written), on each store, in alternating rounds."""
    # The endpoint: the bare axum server, which answers 200 to a POST on /mcp. It stands for
    # the operator's own server, another machine: it runs beside the load, not on grantry's core.
    receiver = Server("receiver", [binary("bare_axum", example=True), "127.0.0.1:{port}"],
                      core=LOAD_CORE)
    servers.append(receiver)
    connections = args.connections[0]
    rows = []
    for store in args.stores:
        instances = {}
        for label, extra in (("plain", ()),
                             ("outbox", ("--webhook-url", f"bench={receiver.base}/mcp"))):
            where = fresh_store(store, work, label)
            server = grantry(store, work, False, where, label, extra,
                             env={"GRANTRY_WEBHOOK_SECRET_BENCH": WEBHOOK_SECRET})
            servers.append(server)
            browser(server, connections, 1)  # warm-up
            instances[label] = server
        runs = {label: [] for label in instances}
        for _ in range(args.rounds):
            for label, server in instances.items():
                run = browser(server, connections, args.seconds)
                run["rps"] = run["requests"] / (run["duration_us"] / 1e6)
                runs[label].append(run)
                print(f"  {store:8} {label:7} {run['rps']:>7.0f} sign-ins/s "
                      f"p50 {run['p50_us'] / 1000:.2f} ms p99 {run['p99_us'] / 1000:.2f} ms "
                      f"callback p50 {run['callback_p50_us'] / 1000:.2f} ms "
                      f"failures {run.get('status_errors', 0)}", file=sys.stderr, flush=True)
        med = {label: (statistics.median(r["rps"] for r in rs),
                       statistics.median(r["p50_us"] for r in rs),
                       statistics.median(r["callback_p50_us"] for r in rs))
               for label, rs in runs.items()}
        rows.append((store, med["plain"], med["outbox"]))
    print(f"\nsign-in rounds, {connections} connections, median of {args.rounds} rounds:")
    for store, (p_rps, p_p50, p_cb), (o_rps, o_p50, o_cb) in rows:
        print(f"  {store:8} no endpoint {p_rps:6.0f}/s p50 {p_p50 / 1000:.2f} ms callback "
              f"{p_cb / 1000:.2f} ms | outbox {o_rps:6.0f}/s p50 {o_p50 / 1000:.2f} ms callback "
              f"{o_cb / 1000:.2f} ms | sign-ins/s {100 * (o_rps - p_rps) / p_rps:+.1f} %, p50 "
              f"{100 * (o_p50 - p_p50) / p_p50:+.1f} %, callback p50 "
              f"{100 * (o_cb - p_cb) / p_cb:+.1f} %")


def keepalive_scan(args, work, servers):
    """The keep-alive's pass over `args.keepalive_scan` grants, all due at once, on each
    shared store (bench/keepalive_scan.rs)."""
    for store in [s for s in args.stores if s != "sqlite"]:
        url, _prefix = fresh_store(store, work, "keepalive")
        out = subprocess.run(["taskset", "-c", LOAD_CORE, binary("keepalive_scan", example=True),
                              url, str(args.keepalive_scan)],
                             check=True, capture_output=True, text=True).stdout
        print(out.strip().splitlines()[-1], flush=True)


def footprint(args, work, servers):
    """What each shared store spends on grantry: the bytes of `args.footprint` grants written
    through grantry's own grant store (bench/seed_grants.rs: a demo grant per user, sealed as
    grantry seals one, with its index entries and keep-alive schedule), and the store's CPU
    time per grant-present call and per whole sign-in, under load from one replica."""
    count = args.footprint
    for store in [s for s in args.stores if s in ("postgres", "redis")]:
        where = fresh_store(store, work, "footprint")
        seed = lambda first, n: subprocess.run(
            [binary("seed_grants", example=True), where[0], where[1] or "grantry:", str(first),
             str(n)], env=dict(os.environ, GRANTRY_KEYS=KEY), check=True, capture_output=True)
        seed(0, 1)  # the schema (PostgreSQL) and the layout marker (Redis) come first
        before = store_bytes(store, where)
        started = time.perf_counter()
        seed(1, count)
        took = time.perf_counter() - started
        after = store_bytes(store, where)
        print(f"{store}: {count} grants written in {took:.1f} s ({count / took:.0f}/s); "
              f"{(after - before) / count:.0f} bytes per grant "
              f"({'database size' if store == 'postgres' else 'used_memory'} "
              f"{before / 2**20:.1f} → {after / 2**20:.1f} MiB)", flush=True)
        server = grantry(store, work, True, where, "footprint")
        servers.append(server)
        sign_in(server)
        body, hdr = list_invoices_request(work, f"footprint-{store}")
        check_answer(server.name, "grant_inproc", server, body, hdr)
        cpu = store_cpu_seconds(store)
        run = wrk(server, body, hdr, 64, 5)
        calls_cpu = store_cpu_seconds(store) - cpu
        cpu = store_cpu_seconds(store)
        signed = browser(server, 16, 5)
        sign_in_cpu = store_cpu_seconds(store) - cpu
        print(f"{store}: {1e6 * calls_cpu / run['requests']:.0f} µs of store CPU per grant-present "
              f"call ({run['requests']} calls, {run['requests'] / run['duration_us'] * 1e6:.0f}/s); "
              f"{1e6 * sign_in_cpu / signed['requests']:.0f} µs per whole sign-in "
              f"({signed['requests']} sign-ins)", flush=True)


def list_invoices_request(work, name):
    """A `tools/call list_invoices` for wrk: the body's file and its headers' file."""
    body = os.path.join(work, f"{name}.json")
    json.dump(message("tools/call", {"name": "list_invoices", "arguments": {}}), open(body, "w"))
    hdr = body + ".headers"
    open(hdr, "w").write("".join(f"{k}: {v}\n" for k, v in
                                 headers("tools/call", "list_invoices").items()))
    return body, hdr


def store_bytes(store, where):
    """PostgreSQL: the database's size on disk (tables, indexes, TOAST). Redis: the server's
    `used_memory` (keys, values, and the index and schedule entries)."""
    if store == "postgres":
        db = where[0].rsplit("/", 1)[1]
        out = subprocess.run(["psql", "-Atq", "-h", "127.0.0.1", "-U", "postgres", "-d", db,
                              "-c", "CHECKPOINT; SELECT pg_database_size(current_database())"],
                             check=True, capture_output=True, text=True).stdout
        return int(out.split()[-1])
    info = subprocess.run(["redis-cli", "-h", "127.0.0.1", "INFO", "memory"], check=True,
                          capture_output=True, text=True).stdout
    return int(next(line.split(":")[1] for line in info.splitlines()
                    if line.startswith("used_memory:")))


def store_cpu_seconds(store):
    """CPU seconds the store's server processes have used (every `postgres` process and the
    backends that exited under it, or the Redis on 6379 as it reports itself)."""
    if store == "redis":
        info = subprocess.run(["redis-cli", "-h", "127.0.0.1", "INFO", "cpu"], check=True,
                              capture_output=True, text=True).stdout
        fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
        return sum(float(fields[k]) for k in ("used_cpu_sys", "used_cpu_user",
                                              "used_cpu_sys_children", "used_cpu_user_children"))
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
        if name == "postgres":
            fields = rest.split()
            # utime, stime, and cutime, cstime: what backends that exited left their parent
            total += sum(int(v) for v in fields[11:15])
    return total / ticks


def traces(args, work, servers):
    """The grant-present round (demo API over HTTP) with traces exported against the same
    build with traces off, and, given `--baseline-bin`, against a build from before traces
    existed: what traces cost when on, and when off. The collector is the bare axum server
    (it takes each export at once), beside the load on its core, as a collector elsewhere."""
    collector = Server("collector", [binary("bare_axum", example=True), "127.0.0.1:{port}"],
                       core=LOAD_CORE)
    servers.append(collector)
    connections = args.connections[-1]
    on = ("--otlp-endpoint", collector.base)
    kinds = [("off", None, (), {}), ("on", None, on, {})]
    if args.baseline_bin:
        kinds.insert(0, ("before", args.baseline_bin, (), {}))
    if os.environ.get("BENCH_TRACES_UNSAMPLED"):
        kinds.append(("unsampled", None, on, {"OTEL_TRACES_SAMPLER": "always_off"}))
    for store in args.stores:
        instances = {}
        for label, program, extra, env in kinds:
            server = grantry(store, work, False, fresh_store(store, work, f"traces_{label}"),
                             f"traces_{label}", extra, env=env, program=program)
            servers.append(server)
            sign_in(server)
            instances[label] = server
        body, hdr = list_invoices_request(work, f"traces-{store}")
        runs = {label: [] for label in instances}
        for label, server in instances.items():
            check_answer(server.name, "grant_http", server, body, hdr)
            wrk(server, body, hdr, connections, 1)
        order = list(instances.items())
        for round_ in range(args.rounds):
            # Each round starts with the next instance: the one measured first in a round ran
            # faster (the others' exporters still draining on the shared core), a bias a fixed
            # order would give one instance every time.
            shift = round_ % len(order)
            for label, server in order[shift:] + order[:shift]:
                cpu = server.cpu_seconds()
                run = wrk(server, body, hdr, connections, args.seconds)
                run["rps"] = run["requests"] / (run["duration_us"] / 1e6)
                # A second for the exporter to send what it still holds: counted in this
                # instance's CPU (every thread of the process), not run beside the next.
                time.sleep(1)
                run["cpu_us"] = (server.cpu_seconds() - cpu) * 1e6 / max(run["requests"], 1)
                runs[label].append(run)
                print(f"  {server.name:28} {run['rps']:>9.0f}/s p50 {run['p50_us'] / 1000:.2f} ms"
                      f" p99 {run['p99_us'] / 1000:.2f} ms cpu {run['cpu_us']:.0f} µs/request",
                      file=sys.stderr, flush=True)
        med = {label: (statistics.median(r["rps"] for r in rs),
                       statistics.median(r["p50_us"] for r in rs),
                       statistics.median(r["cpu_us"] for r in rs)) for label, rs in runs.items()}
        print(f"\n{store}: grant-present round (demo API over HTTP), {connections} connections, "
              f"median of {args.rounds} rounds:")
        off = med["off"]
        for label, (rps, p50, cpu) in med.items():
            versus = "" if label == "off" else \
                f"  vs off: {100 * (rps - off[0]) / off[0]:+.1f} % req/s, " \
                f"p50 {100 * (p50 - off[1]) / off[1]:+.1f} %, CPU {100 * (cpu - off[2]) / off[2]:+.1f} %"
            print(f"  traces {label:6} {rps:9.0f}/s p50 {p50 / 1000:.2f} ms CPU {cpu:.0f} µs/request"
                  f"{versus}")
