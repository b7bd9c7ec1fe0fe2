"""The scenarios of the main run: the targets started, the requests each scenario sends, the
alternating rounds, and the table."""

import json
import os
import statistics
import subprocess
import sys

from harness import (KEY, LOAD_CORE, ROOT, Server, binary, check_answer, floor, fresh_store,
                     grantry, headers, message, post, python_venv, sign_in, typescript_peer,
                     wrk)

SCENARIOS = [
    # name, what it measures, baselines that have it (the floor: the round's required work
    # alone, bench/floor.rs, on the same kind of store)
    ("discover", "server/discover", ("axum", "python", "typescript")),
    ("tools_list", "tools/list", ("axum", "python", "typescript")),
    ("input_required", "tools/call list_invoices, no grant: the sign-in round",
     ("axum", "floor", "python", "typescript")),
    ("grant_http", "tools/call list_invoices, grant present, demo API over HTTP",
     ("axum", "floor", "python", "typescript")),
    ("grant_inproc", "tools/call list_invoices, grant present, demo API in-process",
     ("axum", "floor", "python", "typescript")),
    ("retry", "the retry round: requestState opened, call completes",
     ("axum", "python", "typescript")),
    ("browser", "whole sign-ins per second (5 requests and a token request each)", ()),
]



def start_targets(args, work, servers):
    def start(server):
        servers.append(server)
        return server

    targets = {"axum": start(Server("axum", [binary("bare_axum", example=True),
                                             "127.0.0.1:{port}"]))}
    py = python_venv()
    seed = os.path.join(ROOT, "bench", "python", "seed_billing.py")
    state_key = os.urandom(32).hex()
    py_env = {"BENCH_STATE_KEY": state_key}
    targets["python"] = start(Server("python", [py, seed, "127.0.0.1:{port}"], env=py_env))
    targets["python-granted"] = start(Server(
        "python-granted", [py, seed, "127.0.0.1:{port}"], env=dict(py_env, BENCH_GRANTED="1")))
    node, ts_seed = typescript_peer()
    ts_env = {"BENCH_STATE_KEY": os.urandom(32).hex()}
    targets["typescript"] = start(Server("typescript", [node, ts_seed, "127.0.0.1:{port}"],
                                         env=ts_env))
    targets["typescript-granted"] = start(Server(
        "typescript-granted", [node, ts_seed, "127.0.0.1:{port}"],
        env=dict(ts_env, BENCH_GRANTED="1")))
    for store in args.stores:
        where = fresh_store(store, work)
        targets[f"grantry-{store}"] = start(grantry(store, work, where=where))
        targets[f"grantry-{store}"].where = where
        # `dev` identity has one user; once it connects, only a store of its own keeps the
        # sign-in round measurable.
        targets[f"grantry-{store}"].ungranted = start(
            grantry(store, work, where=fresh_store(store, work, "nogrant"), label="nogrant"))
    for store in args.stores:
        targets[f"floor-{store}"] = start(floor(store, work, fresh_store(store, work, "floor")))
    return targets


def prepare(targets, work, servers):
    """Records the requests each scenario sends, and connects the demo account."""
    for name, server in targets.items():
        server.requests = {}
        server.requests["discover"] = (message("server/discover", {}), headers("server/discover"))
        server.requests["tools_list"] = (message("tools/list", {}), headers("tools/list"))
        call = message("tools/call", {"name": "list_invoices", "arguments": {}})
        call_headers = headers("tools/call", "list_invoices")
        server.requests["input_required"] = (call, call_headers)
        server.requests["grant_http"] = (call, call_headers)
        server.requests["grant_inproc"] = (call, call_headers)
        if name == "axum":
            server.requests["retry"] = (call, call_headers)
        if name.startswith("floor-"):
            server.requests = {s: (call, call_headers)
                               for s in ("input_required", "grant_http", "grant_inproc")}
    # The first round while nothing is connected: its requestState feeds the retry scenario.
    for name, server in list(targets.items()):
        if name.startswith("grantry-") or name in ("python", "typescript"):
            first = json.loads(post(server.base, json.dumps(server.requests["input_required"][0]).encode(),
                                    server.requests["input_required"][1])[1])
            result = first["result"]
            assert result["resultType"] == "input_required", first
            key = next(iter(result["inputRequests"]))
            retry = message("tools/call", {
                "name": "list_invoices", "arguments": {},
                "inputResponses": {key: {"action": "accept"}},
                "requestState": result["requestState"],
            })
            server.requests["retry"] = (retry, server.requests["input_required"][1])
    for sdk in ("python", "typescript"):
        targets[f"{sdk}-granted"].requests["retry"] = targets[sdk].requests["retry"]
    for name in [n for n in targets if n.startswith("grantry-")]:
        server = targets[name]
        sign_in(server)
        store = name.removeprefix("grantry-")
        server.in_process = grantry(store, work, in_process=True, where=server.where,
                                    public_url=server.base)
        servers.append(server.in_process)
    for name, server in targets.items():
        server.bodies = {}
        for scenario, (body, hdrs) in server.requests.items():
            path = os.path.join(work, f"{name}-{scenario}.json")
            with open(path, "w") as f:
                json.dump(body, f)
            hpath = path + ".headers"
            with open(hpath, "w") as f:
                f.write("".join(f"{k}: {v}\n" for k, v in hdrs.items()))
            server.bodies[scenario] = (path, hpath)




def endpoint(targets, target, scenario):
    """The server that answers `scenario` for `target`, or None if it has none."""
    if target in ("python", "typescript"):
        granted = scenario in ("grant_http", "grant_inproc", "retry")
        return targets[f"{target}-granted" if granted else target]
    server = targets[target]
    if scenario == "grant_inproc" and target.startswith("grantry-"):
        return server.in_process
    if scenario == "input_required" and target.startswith("grantry-"):
        return server.ungranted
    return server




def path_of(target, scenario):
    """The floor has a route per scenario; every other target answers MCP on /mcp."""
    return "/" + scenario if target.startswith("floor-") else "/mcp"


def browser(server, connections, seconds):
    out = subprocess.run(
        ["taskset", "-c", LOAD_CORE, binary("browser_rounds", example=True), server.base,
         str(connections), str(seconds)],
        env=dict(os.environ, GRANTRY_KEYS=KEY), capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(args, scenarios, targets, work):
    grantry_targets = [t for t in targets if t.startswith("grantry-")]
    results = []
    for scenario, _, baselines in scenarios:
        floors = [t for t in targets if t.startswith("floor-") and "floor" in baselines]
        order = [b for b in ("axum",) if b in baselines] + grantry_targets + floors + \
                [b for b in ("python", "typescript") if b in baselines]
        for connections in args.connections:
            for target in order:
                server = endpoint(targets, target, scenario)
                if scenario != "browser":
                    check_answer(target, scenario, server, *targets[target].bodies[scenario],
                                 path=path_of(target, scenario))
                    wrk(server, *targets[target].bodies[scenario], connections, 1,
                        path=path_of(target, scenario))  # warm-up
            for round_no in range(args.rounds):
                for target in order:
                    server = endpoint(targets, target, scenario)
                    if scenario == "browser":
                        run = browser(server, connections, args.seconds)
                    else:
                        run = wrk(server, *targets[target].bodies[scenario], connections,
                                  args.seconds, path=path_of(target, scenario))
                    rss, peak = server.rss_mib()
                    run.update(scenario=scenario, target=target, connections=connections,
                               round=round_no, rss_mib=rss, peak_rss_mib=peak,
                               rps=run["requests"] / (run["duration_us"] / 1e6))
                    results.append(run)
                    print(f"  {scenario:14} c={connections:<3} {target:16} "
                          f"{run['rps']:>9.0f}/s p50 {run['p50_us'] / 1000:6.2f} ms "
                          f"p99 {run['p99_us'] / 1000:6.2f} ms errors "
                          f"{run['status_errors'] + run['socket_errors']} rss {rss:.1f} MiB",
                          file=sys.stderr, flush=True)
    return results


def report(args, scenarios, targets, results):
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results,
                       "cold_start_ms": {n: s.cold_start_ms for n, s in targets.items()}}, f,
                      indent=1)
    rows = []
    for scenario, what, _ in scenarios:
        for connections in args.connections:
            runs = [r for r in results if r["scenario"] == scenario
                    and r["connections"] == connections]
            med = {}
            for target in dict.fromkeys(r["target"] for r in runs):
                mine = [r for r in runs if r["target"] == target]
                med[target] = {
                    "rps": statistics.median(r["rps"] for r in mine),
                    "p50": statistics.median(r["p50_us"] for r in mine) / 1000,
                    "p99": statistics.median(r["p99_us"] for r in mine) / 1000,
                    "errors": sum(r["status_errors"] + r["socket_errors"] for r in mine),
                    "rss": max(r["rss_mib"] for r in mine),
                }
            for target, m in med.items():
                vs_axum = f"{100 * m['rps'] / med['axum']['rps']:.0f} %" if "axum" in med and target != "axum" else ""
                p99_axum = f"{m['p99'] / med['axum']['p99']:.1f}×" if "axum" in med and target != "axum" else ""
                vs_py = f"{m['rps'] / med['python']['rps']:.1f}×" if "python" in med and target != "python" else ""
                vs_ts = f"{m['rps'] / med['typescript']['rps']:.1f}×" if "typescript" in med and target != "typescript" else ""
                own_floor = med.get(target.replace("grantry-", "floor-", 1)) \
                    if target.startswith("grantry-") else None
                vs_floor = f"{100 * m['rps'] / own_floor['rps']:.0f} %" if own_floor else ""
                # A Redis Sentinel or Cluster against one Redis server, in the same run.
                single = med.get("grantry-redis") if target.startswith("grantry-redis-") else None
                vs_redis = f"{100 * m['rps'] / single['rps']:.0f} %" if single else ""
                rows.append([scenario, str(connections), target, f"{m['rps']:.0f}",
                             f"{m['p50']:.2f}", f"{m['p99']:.2f}", str(m["errors"]),
                             f"{m['rss']:.1f}", vs_axum, p99_axum, vs_py, vs_ts, vs_floor,
                             vs_redis])
    head = ["scenario", "conns", "target", "req/s", "p50 ms", "p99 ms", "errors", "RSS MiB",
            "vs axum", "p99 vs axum", "vs python", "vs typescript", "vs floor", "vs redis"]
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: "  ".join(c.rjust(w) if i > 2 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    print(line(head))
    for r in rows:
        print(line(r))
    print("\ncold start to the first answered server/discover:")
    for name, server in targets.items():
        print(f"  {name:22} {server.cold_start_ms:7.1f} ms")
        inproc = getattr(server, "in_process", None)
        if inproc:
            print(f"  {inproc.name:22} {inproc.cold_start_ms:7.1f} ms")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n")
            for r in rows:
                f.write("| " + " | ".join(r) + " |\n")
            f.write("\n| server | cold start to the first answered discover |\n|---|---|\n")
            for name, server in targets.items():
                f.write(f"| {name} | {server.cold_start_ms:.1f} ms |\n")
                inproc = getattr(server, "in_process", None)
                if inproc:
                    f.write(f"| {inproc.name} | {inproc.cold_start_ms:.1f} ms |\n")


