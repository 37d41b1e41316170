-- wrk script for the C-client batch bench: POST /api/v4/lookup/ips, the bodies read from a file (one
-- JSON body of 1,000 addresses a line) and sent in turn. Arguments after `--`: the API key, the file.
-- done() prints one JSON line as lookup-list.lua does.
local key
local bodies = {}
local count = 0
local at = 0

function init(args)
  key = args[1]
  for line in io.lines(args[2]) do
    if line ~= "" then
      count = count + 1
      bodies[count] = line
    end
  end
  if count == 0 then error("no bodies in " .. args[2]) end
end

function request()
  at = at + 1
  if at > count then at = 1 end
  return wrk.format("POST", "/api/v4/lookup/ips", { ["x-api-key"] = key, ["content-type"] = "application/json" }, bodies[at])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%d,"p99":%d,"max":%d}\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
