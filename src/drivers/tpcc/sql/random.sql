-- TPC-C's random values (clause 4.3.2), computed in the server so that neither the load
-- nor the transactions need data from the client.

-- NURand(A, x, y) with the run's constant C (clause 2.1.6).
CREATE FUNCTION tpcc_nurand(a integer, x integer, y integer, c integer) RETURNS integer
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT (((floor(random() * (a + 1))::integer | (x + floor(random() * (y - x + 1))::integer)) + c)
        % (y - x + 1)) + x
$$;

-- A last name from the three syllables of a number between 0 and 999 (clause 4.3.2.3).
-- One expression without FROM, so that PostgreSQL inlines it where n is a column.
CREATE FUNCTION tpcc_last_name(n integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[n / 100 + 1]
        || ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[n / 10 % 10 + 1]
        || ('{BAR,OUGHT,ABLE,PRI,PRES,ESE,ANTI,CALLY,ATION,EING}'::text[])[n % 10 + 1]
$$;

-- 13 random hexadecimal digits: random()'s 52 bits, at a quarter of md5's cost per digit.
-- Adding 2^52 gives them all 13 digits, leading zeros too, cheaper than lpad would.
CREATE FUNCTION tpcc_hex13() RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT right(to_hex((random() * 4503599627370496)::bigint + 4503599627370496), 13)
$$;

-- 52 random hexadecimal digits.
CREATE FUNCTION tpcc_hex52() RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT tpcc_hex13() || tpcc_hex13() || tpcc_hex13() || tpcc_hex13()
$$;

-- A random alphanumeric string of lo to hi characters (at most 520), hexadecimal digits
-- drawn anew for every one of them.
-- Each call site's constant hi picks one branch when PostgreSQL inlines the function.
CREATE FUNCTION tpcc_astring(lo integer, hi integer) RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT left(CASE WHEN hi <= 13 THEN tpcc_hex13()
        WHEN hi <= 26 THEN tpcc_hex13() || tpcc_hex13()
        WHEN hi <= 52 THEN tpcc_hex52()
        ELSE concat(tpcc_hex52(), tpcc_hex52(), tpcc_hex52(), tpcc_hex52(), tpcc_hex52(),
            tpcc_hex52(), tpcc_hex52(), tpcc_hex52(), tpcc_hex52(), tpcc_hex52()) END,
        lo + floor(random() * (hi - lo + 1))::integer)
$$;

-- A random string of n digits (at most 18).
CREATE FUNCTION tpcc_nstring(n integer) RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT lpad(floor(random() * 10 ^ n)::bigint::text, n, '0')
$$;

-- A string holding "ORIGINAL" at a random place in 10% of cases (clause 4.3.3.1).
-- s is read three times, so PostgreSQL inlines this only where s is a column, not a call.
CREATE FUNCTION tpcc_original(s text) RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT CASE WHEN random() < 0.1
        THEN overlay(s PLACING 'ORIGINAL' FROM 1 + floor(random() * (length(s) - 7))::integer)
        ELSE s END
$$;

-- A warehouse other than w among n, if there is one.
CREATE FUNCTION tpcc_other(w integer, n integer) RETURNS integer
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT CASE WHEN n = 1 THEN w ELSE 1 + (w + floor(random() * (n - 1))::integer) % n END
$$;
