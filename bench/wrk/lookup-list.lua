-- wrk script for the C-client lookup bench: GET /api/v4/lookup/ip/<addr>, replaying a file of addresses
-- (one a line) in order from an offset, wrapping at the end. Arguments after `--`: the API key, the
-- file, the offset (so a warm round goes on where the previous round stopped instead of asking the
-- addresses the server has already seen). Meant for one thread (-t1): every thread would replay the
-- same sequence. done() prints one JSON line: requests, µs, errors by kind, latency percentiles (µs).
local key
local list = {}
local count = 0
local at = 0

function init(args)
  key = args[1]
  for line in io.lines(args[2]) do
    if line ~= "" then
      count = count + 1
      list[count] = line
    end
  end
  if count == 0 then error("no addresses in " .. args[2]) end
  at = tonumber(args[3] or "0") % count
end

function request()
  at = at + 1
  if at > count then at = 1 end
  return wrk.format("GET", "/api/v4/lookup/ip/" .. list[at], { ["x-api-key"] = key })
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%d,"p99":%d,"max":%d}\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
