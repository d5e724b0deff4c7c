-- fathom's TPC-C-like transactions on MariaDB, run by sysbench (through fathom's timer,
-- which logs each transaction): each event is one transaction of the mix, drawn by its
-- weight, one CALL of its stored procedure with the random inputs TPC-C gives it. A
-- deadlock or lock wait timeout rolls it back and tries it again, with the same inputs,
-- up to FATHOM_TPCC_MAX_TRIES times. The event returns its type (0 new-order, 1
-- payment, 2 delivery, 3 order-status, 4 stock-level), its retries and whether it
-- failed, for the timer's log.
local env = os.getenv
local W = tonumber(env("FATHOM_TPCC_WAREHOUSES"))
local CLIENTS = tonumber(env("FATHOM_TPCC_CLIENTS"))
local HOME = env("FATHOM_TPCC_HOME")
local C_LAST = tonumber(env("FATHOM_TPCC_C_LAST"))
local C_ID = tonumber(env("FATHOM_TPCC_C_ID"))
local OL_I_ID = tonumber(env("FATHOM_TPCC_OL_I_ID"))
local MAX_TRIES = tonumber(env("FATHOM_TPCC_MAX_TRIES"))
local ISOLATION = env("FATHOM_TPCC_ISOLATION")
local WEIGHTS = {}
for w in env("FATHOM_TPCC_WEIGHTS"):gmatch("%d+") do WEIGHTS[#WEIGHTS + 1] = tonumber(w) end
local TOTAL = 0
for _, w in ipairs(WEIGHTS) do TOTAL = TOTAL + w end
local SYLLABLES = { "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING" }

local uniform = sysbench.rand.uniform
local con, home, district

-- NURand(A, x, y) with the run's constant c (clause 2.1.6).
local function nurand(a, x, y, c)
  return ((bit.bor(uniform(0, a), uniform(x, y)) + c) % (y - x + 1)) + x
end

-- A last name from the three syllables of n, 0 to 999 (clause 4.3.2.3).
local function last_name(n)
  return SYLLABLES[math.floor(n / 100) + 1] .. SYLLABLES[math.floor(n / 10) % 10 + 1] .. SYLLABLES[n % 10 + 1]
end

-- A warehouse other than w, if there is one.
local function other(w)
  if W == 1 then return w end
  return 1 + (w + uniform(0, W - 2)) % W
end

-- The warehouse of this transaction, as `home` asks (see fathom's docs/scenarios.md).
local function warehouse()
  if HOME == "all" then
    return (sysbench.tid + CLIENTS * uniform(0, math.ceil(W / CLIENTS) - 1)) % W + 1
  end
  return home
end

-- A customer by last name (60%, id 0) or by id (clause 2.5.1.2).
local function customer()
  if uniform(1, 100) <= 60 then return 0, last_name(nurand(255, 0, 999, C_LAST)) end
  return nurand(1023, 1, 3000, C_ID), ""
end

local function new_order(w)
  local n, lines, all_local = uniform(5, 15), {}, 1
  for k = 1, n do
    local s = w
    if W > 1 and uniform(1, 100) == 1 then s, all_local = other(w), 0 end
    lines[k] = { nurand(8191, 1, 100000, OL_I_ID), s, uniform(1, 10) }
  end
  -- 1% of orders hold an item that does not exist, and are rolled back
  if uniform(1, 100) == 1 then lines[n][1] = 100001 end
  table.sort(lines, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  local items, supply, qty = {}, {}, {}
  for k, l in ipairs(lines) do items[k], supply[k], qty[k] = l[1], l[2], l[3] end
  return string.format("CALL tpcc_new_order(%d, %d, %d, '%s', '%s', '%s', %d)", w, uniform(1, 10),
    nurand(1023, 1, 3000, C_ID), table.concat(items, ","), table.concat(supply, ","), table.concat(qty, ","),
    all_local)
end

local function payment(w)
  local d = uniform(1, 10)
  local c_w, c_d = w, d
  if W > 1 and uniform(1, 100) <= 15 then c_w, c_d = other(w), uniform(1, 10) end
  local c, last = customer()
  return string.format("CALL tpcc_payment(%d, %d, %d, %d, %d, '%s', %d.%02d)", w, d, c_w, c_d, c, last,
    uniform(1, 4999), uniform(0, 99))
end

local function delivery(w)
  return string.format("CALL tpcc_delivery(%d, %d)", w, uniform(1, 10))
end

local function order_status(w)
  local c, last = customer()
  return string.format("CALL tpcc_order_status(%d, %d, %d, '%s')", w, uniform(1, 10), c, last)
end

-- TPC-C fixes a terminal's district for its stock-levels.
local function stock_level(w)
  return string.format("CALL tpcc_stock_level(%d, %d, %d)", w, district, uniform(10, 20))
end

local TRANSACTIONS = { new_order, payment, delivery, order_status, stock_level }

function thread_init()
  con = sysbench.sql.driver():connect()
  con:query("SET SESSION TRANSACTION ISOLATION LEVEL " .. ISOLATION)
  district = sysbench.tid % 10 + 1
  if HOME == "random" then home = uniform(1, W) else home = sysbench.tid % W + 1 end
end

function thread_done()
  con:disconnect()
end

function event()
  local r, t = uniform(1, TOTAL), 1
  while r > WEIGHTS[t] do r, t = r - WEIGHTS[t], t + 1 end
  local sql = TRANSACTIONS[t](warehouse())
  for try = 1, MAX_TRIES do
    local ok, err = pcall(con.query, con, sql)
    if ok then return t - 1, try - 1, false end
    if type(err) ~= "table" or err.errcode ~= sysbench.error.RESTART_EVENT then error(err, 0) end
    con:query("ROLLBACK")
  end
  return t - 1, MAX_TRIES - 1, true
end
