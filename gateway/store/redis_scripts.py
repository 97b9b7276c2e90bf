"""The Redis backend's Lua scripts. Each runs atomically: that is what makes bookings
and spend reservations hold across any number of gateway replicas. Every key a script
takes belongs to one tenant and carries its hash tag (redis_keys), so on a Redis Cluster
each call touches one slot.

A budget (see gateway.spend.ceilings) is three keys (redis_keys.budget_keys):
  gw:{<tenant>}:budget:<key>    hash: `spent` (settled cost) and `open` (sum of live
                                reservations), in 1e-10 USD units
  gw:{<tenant>}:resv:<key>      sorted set: reservation id -> expiry (unix seconds, Redis's
                                clock)
  gw:{<tenant>}:resvamt:<key>   hash: reservation id -> reserved amount
A reservation whose replica died is never settled; it expires and is dropped by the next
reservation against the same budget. Lua numbers are doubles: budgets stay exact up to
about $900,000 per period.
"""

# Book one ledger record and settle its reservation. The global indexes (periods, the
# tenants of a period) are added to before the call, by their own commands.
# KEYS[1] booked marker  KEYS[2] tenant-month hash  KEYS[3] tenant ledger list
# KEYS[4..] one (budget hash, reservation zset, amount hash) triple per budget
# ARGV[1] marker ttl (s)  ARGV[2] plan  ARGV[3] record JSON ('' to keep no ledger row)
# ARGV[4] reservation id ('' for none)  ARGV[5] cost units  ARGV[6] the budgets' ttls (s),
# one per triple in KEYS order, separated by spaces (a day's budget goes sooner than a month's)
# ARGV[7] the marker's value ('1'; beside the PostgreSQL ledger, the record as booked,
# RedisStore.booked_records)  ARGV[8..] counter name, increment, counter name, increment, ...
# Returns 1 when booked, 0 when the id was booked before (the reservation is settled
# either way, and the marker keeps what was booked first), an error reply when a counter
# would pass 9e18 (64-bit counters end at 9.22e18): Redis does not undo a script's
# earlier writes when a later command fails, so every counter is checked before anything
# is written, and the booked marker is set last: a record that failed is never taken for
# booked (the bookkeeper sets it aside).
BOOK = """
local rid = ARGV[4]
local ttls = {}
for ttl in string.gmatch(ARGV[6], '%S+') do
  ttls[#ttls + 1] = tonumber(ttl)
end
local function overflows(key, field, add)
  local n = tonumber(add)
  return not n or n < 0 or n + tonumber(redis.call('HGET', key, field) or '0') > 9e18
end
for i = 8, #ARGV, 2 do
  if overflows(KEYS[2], ARGV[i], ARGV[i + 1]) then
    return redis.error_reply('counter ' .. ARGV[i] .. ' would overflow')
  end
end
for b = 4, #KEYS, 3 do
  if overflows(KEYS[b], 'spent', ARGV[5]) then
    return redis.error_reply('budget would overflow')
  end
end
for b = 4, #KEYS, 3 do
  if rid ~= '' then
    local amount = redis.call('HGET', KEYS[b + 2], rid)
    if amount then
      redis.call('HINCRBY', KEYS[b], 'open', -tonumber(amount))
      redis.call('HDEL', KEYS[b + 2], rid)
      redis.call('ZREM', KEYS[b + 1], rid)
    end
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
for i = 8, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
end
for b = 4, #KEYS, 3 do
  redis.call('HINCRBY', KEYS[b], 'spent', ARGV[5])
  redis.call('EXPIRE', KEYS[b], ttls[(b - 1) / 3])
end
redis.call('HSET', KEYS[2], 'plan', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[3])
end
redis.call('SET', KEYS[1], ARGV[7], 'EX', tonumber(ARGV[1]))
return 1
"""

# Reserve `amount` against every budget, or against none.
# KEYS: one (budget hash, reservation zset, amount hash) triple per guarded budget
# ARGV[1] reservation id  ARGV[2] amount (units)  ARGV[3] ttl (s)  ARGV[4] the budgets'
# ttls (s), one per triple in KEYS order, separated by spaces
# ARGV[5..] the ceiling of each budget, in KEYS order (units)
# Returns 0 when reserved, else the 1-based index of the first budget it would pass.
# The three keys get BOOK's budget expiry here too: a budget whose calls all failed
# (released, never booked) or whose replica died holding it is not kept for ever.
RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local amount = tonumber(ARGV[2])
local ttls = {}
for ttl in string.gmatch(ARGV[4], '%S+') do
  ttls[#ttls + 1] = tonumber(ttl)
end
for b = 1, #KEYS, 3 do
  local expired = redis.call('ZRANGEBYSCORE', KEYS[b + 1], '-inf', now)
  for _, member in ipairs(expired) do
    local gone = redis.call('HGET', KEYS[b + 2], member)
    if gone then
      redis.call('HINCRBY', KEYS[b], 'open', -tonumber(gone))
      redis.call('HDEL', KEYS[b + 2], member)
    end
  end
  if #expired > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[b + 1], '-inf', now)
  end
  local spent = tonumber(redis.call('HGET', KEYS[b], 'spent') or '0')
  local open = tonumber(redis.call('HGET', KEYS[b], 'open') or '0')
  local index = (b + 2) / 3
  if spent + open + amount > tonumber(ARGV[4 + index]) then
    return index
  end
end
for b = 1, #KEYS, 3 do
  redis.call('ZADD', KEYS[b + 1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('HSET', KEYS[b + 2], ARGV[1], amount)
  redis.call('HINCRBY', KEYS[b], 'open', amount)
  for k = b, b + 2 do
    redis.call('EXPIRE', KEYS[k], ttls[(b + 2) / 3])
  end
end
return 0
"""

# Release a reservation that will not be settled (the call failed before the upstream).
# KEYS: budget triples as in RESERVE  ARGV[1] reservation id
RELEASE = """
for b = 1, #KEYS, 3 do
  local amount = redis.call('HGET', KEYS[b + 2], ARGV[1])
  if amount then
    redis.call('HINCRBY', KEYS[b], 'open', -tonumber(amount))
    redis.call('HDEL', KEYS[b + 2], ARGV[1])
    redis.call('ZREM', KEYS[b + 1], ARGV[1])
  end
end
return 0
"""


# Extend a live reservation while its call runs (a long stream outlives the TTL).
# KEYS: budget triples as in RESERVE  ARGV[1] reservation id  ARGV[2] ttl (s)
# Returns 1 when it was still held (not settled, released or expired), else 0.
RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local held = 0
for b = 1, #KEYS, 3 do
  local expiry = redis.call('ZSCORE', KEYS[b + 1], ARGV[1])
  if expiry and tonumber(expiry) > now then
    redis.call('ZADD', KEYS[b + 1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
    held = 1
  end
end
return held
"""


# Count a call against rate-limit counters (gateway.spend.rate_limits), or none of them.
# KEYS: one hash per counter (redis_keys.rate_key): field = bucket (ms // bucket ms),
# value = amount counted in it
# ARGV[1] bucket length (ms)  ARGV[2] span: buckets before the current one that count
# ARGV[3] bucket to settle into without a check ('' to check and count now)
# ARGV[4..] limit, amount of each counter, in KEYS order
# Buckets older than the span are deleted as they are read. Returns {admitted (1 or 0),
# now (ms, Redis's clock), bucket counted in, then per counter: its number of live
# buckets n and n (bucket, amount) pairs, this call's amount included}.
RATE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local size = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
local current = math.floor(now / size)
local oldest = current - span
local bucket = current
local settle = ARGV[3] ~= ''
if settle then
  bucket = tonumber(ARGV[3])
end
local live = {}
local admitted = 1
for i, key in ipairs(KEYS) do
  local flat = redis.call('HGETALL', key)
  local found, sum = {}, 0
  for j = 1, #flat, 2 do
    local b = tonumber(flat[j])
    if b < oldest then
      redis.call('HDEL', key, flat[j])
    else
      local n = tonumber(flat[j + 1])
      found[#found + 1] = {b, n}
      sum = sum + n
    end
  end
  live[i] = found
  if not settle and sum + tonumber(ARGV[3 + 2 * i]) > tonumber(ARGV[2 + 2 * i]) then
    admitted = 0
  end
end
if admitted == 1 and bucket >= oldest then
  for i, key in ipairs(KEYS) do
    local add = tonumber(ARGV[3 + 2 * i])
    if add > 0 then
      redis.call('HINCRBY', key, bucket, add)
      redis.call('PEXPIRE', key, (span + 2) * size)
      local merged = false
      for _, pair in ipairs(live[i]) do
        if pair[1] == bucket then
          pair[2] = pair[2] + add
          merged = true
        end
      end
      if not merged then
        live[i][#live[i] + 1] = {bucket, add}
      end
    end
  end
end
local out = {admitted, now, bucket}
for i = 1, #KEYS do
  out[#out + 1] = #live[i]
  for _, pair in ipairs(live[i]) do
    out[#out + 1] = pair[1]
    out[#out + 1] = pair[2]
  end
end
return out
"""


# Privacy erasure: every row of a tenant's ledger list that names the customer (and the
# tenant) gets the pseudonym, in one atomic step (bookings append meanwhile). The rows
# are compact JSON (orjson), so the id is replaced as text, in the customer field and in
# the budget keys the row lists: no decode and re-encode that could round a number.
# KEYS[1] the list; ARGV[1] '"customer":"<id>"', ARGV[2] '"customer":"<alias>"',
# ARGV[3] '"tenant":"<tenant>"', ARGV[4] '|customer:<id>|', ARGV[5] '|customer:<alias>|',
# ARGV[6] and ARGV[7] the first and last index of the chunk this call rewrites (a list is
# rewritten a chunk at a time, so Redis never stops for a whole month's rows; bookings
# only append, so indexes stay put). Returns the rows changed.
PSEUDONYMIZE = """
local function replace_all(text, old, new)
  local out, at = {}, 1
  while true do
    local s, e = string.find(text, old, at, true)
    if not s then break end
    out[#out + 1] = string.sub(text, at, s - 1) .. new
    at = e + 1
  end
  out[#out + 1] = string.sub(text, at)
  return table.concat(out)
end
local first = tonumber(ARGV[6])
local rows = redis.call('LRANGE', KEYS[1], first, tonumber(ARGV[7]))
local changed = 0
for i, row in ipairs(rows) do
  if string.find(row, ARGV[1], 1, true) and string.find(row, ARGV[3], 1, true) then
    local new = replace_all(replace_all(row, ARGV[1], ARGV[2]), ARGV[4], ARGV[5])
    redis.call('LSET', KEYS[1], first + i - 1, new)
    changed = changed + 1
  end
end
return changed
"""


# Compare-and-set of a document (a hash of JSON fields, see RedisStore.patch_doc): the
# write applies only while the `version` field is the one the writer read.
# KEYS[1] the document  ARGV[1] the version read (absent: 0)  ARGV[2] ttl in ms ('' none)
# ARGV[3] how many fields to drop, then those fields, then field, JSON value, ...
# Returns 1 when written (version now ARGV[1] + 1), 0 when another write came first.
SWAP = """
local v = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if v ~= tonumber(ARGV[1]) then
  return 0
end
local n = tonumber(ARGV[3])
for i = 4, 3 + n do
  redis.call('HDEL', KEYS[1], ARGV[i])
end
for i = 4 + n, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'version', tostring(v + 1))
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
"""


# An erasure: a customer's settled spend moved to their pseudonym. The live reservations
# (`open`, and the resv / resvamt keys) stay under the id: their calls book there when
# they end, so they still count against the id's ceiling until then.
# KEYS[1] the id's budget hash  KEYS[2] the pseudonym's budget hash (one tenant: one slot)
# Returns 1 when there was spend to move, else 0.
MOVE_SPENT = """
local spent = redis.call('HGET', KEYS[1], 'spent')
if not spent then
  return 0
end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('HINCRBY', KEYS[2], 'spent', spent)
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
end
if tonumber(redis.call('HGET', KEYS[1], 'open') or '0') ~= 0 then
  redis.call('HDEL', KEYS[1], 'spent')
else
  redis.call('DEL', KEYS[1])
end
return 1
"""
