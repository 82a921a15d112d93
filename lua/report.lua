-- wrk's report as one line of JSON, for bench/wrk.py to read.
--
--     wrk --script lua/report.lua URL
--
-- wrk's own text is for people. This script counts the responses by status
-- (wrk itself only counts statuses above 399 as errors) and, when wrk is done,
-- prints one line starting with "BENCH_JSON " holding the summary, the errors
-- and the latency percentiles, all in microseconds.

local threads = {}

function setup(thread)
   table.insert(threads, thread)
end

function init(args)
   statuses = {}
end

function response(status, headers, body)
   statuses[status] = (statuses[status] or 0) + 1
end

local function json_object(pairs_list)
   local parts = {}
   for _, pair in ipairs(pairs_list) do
      parts[#parts + 1] = string.format('"%s": %s', pair[1], pair[2])
   end
   return "{" .. table.concat(parts, ", ") .. "}"
end

function done(summary, latency, requests)
   local statuses = {}
   for _, thread in ipairs(threads) do
      for status, count in pairs(thread:get("statuses")) do
         statuses[status] = (statuses[status] or 0) + count
      end
   end
   local status_pairs = {}
   for status, count in pairs(statuses) do
      status_pairs[#status_pairs + 1] = { tostring(status), string.format("%d", count) }
   end
   local percentiles = {}
   for _, p in ipairs({ 50, 75, 90, 99, 99.9 }) do
      percentiles[#percentiles + 1] = { tostring(p), string.format("%d", latency:percentile(p)) }
   end
   local errors = summary.errors
   io.write("BENCH_JSON ", json_object({
      { "duration_us", string.format("%d", summary.duration) },
      { "requests", string.format("%d", summary.requests) },
      { "bytes", string.format("%d", summary.bytes) },
      { "errors", json_object({
         { "connect", string.format("%d", errors.connect) },
         { "read", string.format("%d", errors.read) },
         { "write", string.format("%d", errors.write) },
         { "status", string.format("%d", errors.status) },
         { "timeout", string.format("%d", errors.timeout) },
      }) },
      { "statuses", json_object(status_pairs) },
      { "latency_us", json_object({
         { "min", string.format("%d", latency.min) },
         { "max", string.format("%d", latency.max) },
         { "mean", string.format("%.1f", latency.mean) },
         { "stdev", string.format("%.1f", latency.stdev) },
         { "percentiles", json_object(percentiles) },
      }) },
   }), "\n")
end
