-- The new-order transaction (clause 2.4) for home warehouse w among n, with the run's
-- NURand constants for customer and item ids, in a few set-wise statements. Its stock
-- rows are locked in item order before they are updated, so that concurrent new-orders
-- cannot deadlock. In 1% of orders the last item is unused (clause 2.4.1.4): it has no
-- line, the function returns 0 and its caller rolls the transaction back; 1 otherwise.
-- It never raises on the data.
CREATE FUNCTION tpcc_new_order(w integer, n integer, c_id_c integer, ol_i_id_c integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    d integer := 1 + floor(random() * 10)::integer;
    c integer := tpcc_nurand(1023, 1, 3000, c_id_c);
    lines integer := 5 + floor(random() * 11)::integer;
    unused boolean := random() < 0.01;
    items integer[];
    supply integer[];
    qty integer[];
    o integer;
    tax_w numeric;
    tax_d numeric;
    discount numeric;
    inserted integer;
BEGIN
    SELECT array_agg(i ORDER BY i, s), array_agg(s ORDER BY i, s), array_agg(q ORDER BY i, s)
    INTO items, supply, qty
    FROM (SELECT CASE WHEN unused AND k = lines THEN 100001 ELSE tpcc_nurand(8191, 1, 100000, ol_i_id_c) END AS i,
                 CASE WHEN random() < 0.01 THEN tpcc_other(w, n) ELSE w END AS s,
                 1 + floor(random() * 10)::integer AS q
          FROM generate_series(1, lines) k) drawn;
    SELECT w_tax INTO tax_w FROM warehouse WHERE w_id = w;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = w AND d_id = d
    RETURNING d_next_o_id - 1, d_tax INTO o, tax_d;
    SELECT c_discount INTO discount FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = c;
    INSERT INTO orders VALUES (o, d, w, c, now(), NULL, lines, (w = ALL (supply))::integer);
    INSERT INTO new_order VALUES (o, d, w);
    PERFORM 1 FROM stock JOIN unnest(items, supply) AS l(i, s) ON s_w_id = l.s AND s_i_id = l.i
    ORDER BY s_i_id, s_w_id FOR UPDATE OF stock;
    UPDATE stock SET
        s_quantity = CASE WHEN s_quantity >= l.q + 10 THEN s_quantity - l.q ELSE s_quantity - l.q + 91 END,
        s_ytd = s_ytd + l.q, s_order_cnt = s_order_cnt + l.times,
        s_remote_cnt = s_remote_cnt + CASE WHEN l.s <> w THEN l.times ELSE 0 END
    FROM (SELECT i, s, sum(q) AS q, count(*) AS times FROM unnest(items, supply, qty) AS u(i, s, q) GROUP BY i, s) l
    WHERE s_w_id = l.s AND s_i_id = l.i;
    INSERT INTO order_line
    SELECT o, d, w, l.k, l.i, l.s, NULL, l.q, l.q * i_price * (1 + tax_w + tax_d) * (1 - discount),
        CASE d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
            WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
            WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
    FROM unnest(items, supply, qty) WITH ORDINALITY AS l(i, s, q, k)
    JOIN item ON i_id = l.i
    JOIN stock ON s_w_id = l.s AND s_i_id = l.i;
    GET DIAGNOSTICS inserted = ROW_COUNT;
    RETURN (inserted = lines)::integer;
END;
$$;
