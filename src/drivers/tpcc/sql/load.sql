-- The population of clause 4.3.3.1: the items once, and each warehouse's stock, and
-- its districts with their customers, history and orders, each a call of its own so
-- that sessions load them in parallel.
-- A random value a function reads more than once (tpcc_original's string, tpcc_last_name's
-- number) is drawn in a subquery of its own: PostgreSQL inlines the function only where
-- that argument is a column, and calls it per row at several times the cost otherwise.

CREATE FUNCTION tpcc_load_items() RETURNS void LANGUAGE sql AS $$
    INSERT INTO item
    SELECT i, 1 + floor(random() * 10000), tpcc_astring(14, 24), round((1 + random() * 99)::numeric, 2),
        tpcc_original(data)
    FROM (SELECT i, tpcc_astring(26, 50) AS data FROM generate_series(1, 100000) i) drawn;
$$;

CREATE FUNCTION tpcc_load_stock(w integer) RETURNS void LANGUAGE sql AS $$
    INSERT INTO stock
    SELECT i, w, 10 + floor(random() * 91), tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24),
        tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24),
        tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24), 0, 0, 0,
        tpcc_original(data)
    FROM (SELECT i, tpcc_astring(26, 50) AS data FROM generate_series(1, 100000) i) drawn;
$$;

CREATE FUNCTION tpcc_load_warehouse(w integer, c_last_c integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO warehouse VALUES (w, tpcc_astring(6, 10), tpcc_astring(10, 20), tpcc_astring(10, 20),
        tpcc_astring(10, 20), tpcc_astring(2, 2), tpcc_nstring(4) || '11111',
        round((random() * 0.2)::numeric, 4), 300000);
    INSERT INTO district
    SELECT d, w, tpcc_astring(6, 10), tpcc_astring(10, 20), tpcc_astring(10, 20), tpcc_astring(10, 20),
        tpcc_astring(2, 2), tpcc_nstring(4) || '11111', round((random() * 0.2)::numeric, 4), 30000, 3001
    FROM generate_series(1, 10) d;
    -- the first 1000 customers of a district take the 1000 names in turn, the others
    -- a name drawn with NURand and the load's constant
    INSERT INTO customer
    SELECT c, d, w, tpcc_astring(8, 16), 'OE', tpcc_last_name(n),
        tpcc_astring(10, 20), tpcc_astring(10, 20), tpcc_astring(10, 20), tpcc_astring(2, 2),
        tpcc_nstring(4) || '11111', tpcc_nstring(16), now(), CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END,
        50000, round((random() * 0.5)::numeric, 4), -10, 10, 1, 0, tpcc_astring(300, 500)
    FROM (SELECT d, c, CASE WHEN c <= 1000 THEN c - 1 ELSE tpcc_nurand(255, 0, 999, c_last_c) END AS n
          FROM generate_series(1, 10) d, generate_series(1, 3000) c) named;
    INSERT INTO history
    SELECT c, d, w, d, w, now(), 10, tpcc_astring(12, 24)
    FROM generate_series(1, 10) d, generate_series(1, 3000) c;
    -- each district's orders are for its customers in a random order; the last 900
    -- are not delivered yet
    WITH o AS (
        INSERT INTO orders
        SELECT o, d, w, c, now(), CASE WHEN o < 2101 THEN 1 + floor(random() * 10) END,
            5 + floor(random() * 11), 1
        FROM (SELECT d, c, row_number() OVER (PARTITION BY d ORDER BY random()) AS o
              FROM generate_series(1, 10) d, generate_series(1, 3000) c) permuted
        RETURNING o_id, o_d_id, o_entry_d, o_ol_cnt
    )
    INSERT INTO order_line
    SELECT o_id, o_d_id, w, n, 1 + floor(random() * 100000), w,
        CASE WHEN o_id < 2101 THEN o_entry_d END, 5,
        CASE WHEN o_id < 2101 THEN 0 ELSE round((0.01 + random() * 9999.98)::numeric, 2) END,
        tpcc_astring(24, 24)
    FROM o, generate_series(1, o_ol_cnt) n;
    INSERT INTO new_order SELECT o, d, w FROM generate_series(1, 10) d, generate_series(2101, 3000) o;
END;
$$;
