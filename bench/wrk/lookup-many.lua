-- wrk script for the distributed-mode bench: GET /api/v4/lookup/ip/<addr> over many distinct
-- addresses, the same sequence against every server. Arguments after `--`: the API key and a seed.
-- Per 10 requests: 5 from a warm set of 4,096 addresses (3 of 4 IPv4, 1 of 4 IPv6) that recur all
-- through the run, 4 fresh random IPv4 and 1 fresh random IPv6 address (cold: seen once, if ever).
-- done() prints one JSON line: requests, seconds, errors by kind, latency percentiles (µs).
local key
local warm = {}
local n = 0

local function v4()
  -- Public-looking first octets: 1-223 without 10 and 127.
  local a = math.random(1, 221)
  if a >= 10 then a = a + 1 end
  if a >= 127 then a = a + 1 end
  return a .. "." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(1, 254)
end

local function v6()
  -- 2000::/3, the global unicast space, four random groups then zeros and a random interface id.
  return string.format("%x:%x:%x:%x::%x", math.random(0x2001, 0x2a0f), math.random(0, 0xffff), math.random(0, 0xffff),
    math.random(0, 0xffff), math.random(1, 0xffff))
end

function init(args)
  key = args[1]
  math.randomseed(tonumber(args[2] or "1"))
  for i = 1, 4096 do
    if i % 4 == 0 then warm[i] = v6() else warm[i] = v4() end
  end
end

function request()
  n = n + 1
  local r = n % 10
  local ip
  if r < 5 then
    ip = warm[math.random(1, 4096)]
  elseif r < 9 then
    ip = v4()
  else
    ip = v6()
  end
  return wrk.format("GET", "/api/v4/lookup/ip/" .. ip, { ["x-api-key"] = key })
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"us":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50":%d,"p99":%d,"max":%d}\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
