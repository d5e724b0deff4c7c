-- The customer a payment or an order-status is for (clause 2.5.1.2, 2.6.1.2): by last
-- name in 60% of cases, the one in the middle of those of that name ordered by first
-- name; else by id. Both drawn with NURand and the run's constants.
CREATE FUNCTION tpcc_customer(w integer, d integer, c_id_c integer, c_last_c integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    name text;
    syllables integer;
    found_c integer;
    named integer;
BEGIN
    IF random() >= 0.6 THEN
        RETURN tpcc_nurand(1023, 1, 3000, c_id_c);
    END IF;
    -- drawn first, so that PostgreSQL inlines tpcc_last_name, which reads it three times
    syllables := tpcc_nurand(255, 0, 999, c_last_c);
    name := tpcc_last_name(syllables);
    SELECT count(*) INTO named FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = name;
    SELECT c_id INTO found_c FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = name
    ORDER BY c_first OFFSET greatest(named - 1, 0) / 2 LIMIT 1;
    -- every name is some customer's (the first 1000 of a district take them all)
    RETURN coalesce(found_c, tpcc_nurand(1023, 1, 3000, c_id_c));
END;
$$;
