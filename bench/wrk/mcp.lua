-- wrk script: POST one fixed MCP request, then print the summary as one JSON line.
-- The request comes from the environment: BENCH_BODY (a file holding the JSON body),
-- BENCH_HEADERS (a file of `Name: value` lines) and BENCH_PATH (default /mcp).

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

wrk.method = "POST"
wrk.body = read(os.getenv("BENCH_BODY"))
wrk.path = os.getenv("BENCH_PATH") or "/mcp"
for line in read(os.getenv("BENCH_HEADERS")):gmatch("[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status_errors":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
